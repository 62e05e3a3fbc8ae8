/* Stands in for <linux/inet_diag.h>: see kernel.h. */
#include "../kernel.h"
