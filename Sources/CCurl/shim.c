#include "CCurl.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buffer {
    unsigned char *bytes;
    size_t length;
    size_t max;
    int too_large;
};

static size_t take(char *data, size_t size, size_t count, void *context) {
    struct buffer *buffer = context;
    size_t bytes = size * count;
    if (buffer->length + bytes > buffer->max) {
        buffer->too_large = 1;
        return 0;  // libcurl stops with CURLE_WRITE_ERROR
    }
    unsigned char *grown = realloc(buffer->bytes, buffer->length + bytes + 1);
    if (grown == NULL) return 0;
    memcpy(grown + buffer->length, data, bytes);
    buffer->bytes = grown;
    buffer->length += bytes;
    return bytes;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void initialise(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int ccurl_get(const char *url, long timeout_ms, size_t max_bytes, unsigned char **body, size_t *length, char *error,
              size_t error_size) {
    pthread_once(&once, initialise);
    *body = NULL;
    *length = 0;
    CURL *handle = curl_easy_init();
    if (handle == NULL) {
        snprintf(error, error_size, "libcurl could not start");
        return -1;
    }
    struct buffer buffer = {NULL, 0, max_bytes, 0};
    char message[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(handle, CURLOPT_URL, url);
    curl_easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &buffer);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, message);
    CURLcode result = curl_easy_perform(handle);
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(handle);
    if (result != CURLE_OK) {
        free(buffer.bytes);
        if (buffer.too_large) {
            snprintf(error, error_size, "the answer is larger than %zu bytes", max_bytes);
        } else {
            snprintf(error, error_size, "%s", message[0] ? message : curl_easy_strerror(result));
        }
        return -1;
    }
    *body = buffer.bytes;
    *length = buffer.length;
    return (int)status;
}

void ccurl_free(void *pointer) { free(pointer); }
