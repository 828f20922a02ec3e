// A thin shim over libcurl (Debian's libcurl4-openssl-dev): one blocking GET, because Swift
// cannot call curl_easy_setopt (variadic). Nothing else lives here.
#ifndef C_CURL_H
#define C_CURL_H

#include <stddef.h>

/// GETs `url` (http or https only, no redirects), waiting at most `timeout_ms`, keeping at
/// most `max_bytes` of the body. Returns the HTTP status, with the body in `*body` (free it
/// with ccurl_free) and its length in `*length`; or -1, with why in `error`.
int ccurl_get(const char *url, long timeout_ms, size_t max_bytes, unsigned char **body, size_t *length, char *error,
              size_t error_size);

void ccurl_free(void *pointer);

#endif
