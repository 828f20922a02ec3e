// A thin shim over hiredis (Debian's libhiredis-dev): it re-exports <hiredis/hiredis.h> and
// names the reply types for Swift, which cannot see the macros. Nothing else lives here.
#ifndef C_HIREDIS_H
#define C_HIREDIS_H

#include <hiredis/hiredis.h>

static const int CHIREDIS_REPLY_STRING = REDIS_REPLY_STRING;
static const int CHIREDIS_REPLY_ARRAY = REDIS_REPLY_ARRAY;
static const int CHIREDIS_REPLY_INTEGER = REDIS_REPLY_INTEGER;
static const int CHIREDIS_REPLY_NIL = REDIS_REPLY_NIL;
static const int CHIREDIS_REPLY_STATUS = REDIS_REPLY_STATUS;
static const int CHIREDIS_REPLY_ERROR = REDIS_REPLY_ERROR;
static const int CHIREDIS_OK = REDIS_OK;

#endif
