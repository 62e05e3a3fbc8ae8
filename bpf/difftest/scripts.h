/* The differential test's scripts (scripts.c). Written for ITB. */
#ifndef CCDIFF_SCRIPTS_H
#define CCDIFF_SCRIPTS_H

#include "model.h"

enum action_kind { A_PACE_HALF, A_PACE_OFF, A_APP_STOP, A_APP_BULK, A_APP_HALF, A_BURST, A_REORDER };

struct action {
	u64 at_us;
	enum action_kind kind;
	u64 arg;  /* A_BURST: duration; A_REORDER: extra delay (us) */
};

/* What a script must reach on both sides, or it fails as not covering its case. */
struct expect {
	u32 min_cwnd;
	u64 recoveries, rtos, undos, restarts, tx_starts, not_cwnd_limited, app_limited_cuts;
};

struct script {
	const char *name;
	struct link link;
	u32 init_cwnd, init_ssthresh;  /* ssthresh 0: none yet (infinite) */
	u64 duration_us;
	u32 stop_cwnd;                 /* end once cwnd reaches this (0: run to the end) */
	const struct action *actions;
	unsigned n_actions;
	struct expect expect;
};

extern const struct script SCRIPTS[];
extern const unsigned N_SCRIPTS;
const struct script *find_script(const char *name);
void apply_action(struct sim *s, const struct action *a);

#endif
