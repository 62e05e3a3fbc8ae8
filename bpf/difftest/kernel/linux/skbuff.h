/* Stands in for <linux/skbuff.h>: see kernel.h. */
#include "../kernel.h"
