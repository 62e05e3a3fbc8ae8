/* Stands in for <linux/module.h>: see kernel.h. */
#include "../kernel.h"
