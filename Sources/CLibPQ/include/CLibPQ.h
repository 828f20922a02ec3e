// A thin shim over libpq (Debian's libpq-dev): it re-exports <libpq-fe.h>, which Debian keeps
// under postgresql/. Nothing else lives here.
#ifndef C_LIBPQ_H
#define C_LIBPQ_H

#include <postgresql/libpq-fe.h>

#endif
