#include "CLibPQ.h"
