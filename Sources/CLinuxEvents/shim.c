// The header is the whole shim; SwiftPM builds a C target from at least one source file.
#include "CLinuxEvents.h"
