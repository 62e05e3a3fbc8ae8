/* Stands in for <net/tcp.h>: see kernel.h. */
#include "../kernel.h"
