#include "CHiredis.h"
