/* Stands in for <linux/math64.h>: see kernel.h. */
#include "../kernel.h"
