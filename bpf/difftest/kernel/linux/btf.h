/* Stands in for <linux/btf.h>: see kernel.h. */
#include "../kernel.h"
