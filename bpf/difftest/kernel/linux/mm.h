/* Stands in for <linux/mm.h>: see kernel.h. */
#include "../kernel.h"
