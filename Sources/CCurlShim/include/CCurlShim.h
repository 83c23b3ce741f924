// What Swift cannot call in libcurl: the variadic curl_easy_setopt and curl_easy_getinfo (one
// function per argument type), and a socket-opening callback that checks each address before
// curl connects to it.
#ifndef DERIVE_CCURL_SHIM_H
#define DERIVE_CCURL_SHIM_H

#include <curl/curl.h>

CURLcode ccurl_setopt_long(CURL *curl, CURLoption option, long value);
CURLcode ccurl_setopt_string(CURL *curl, CURLoption option, const char *value);
CURLcode ccurl_setopt_off_t(CURL *curl, CURLoption option, curl_off_t value);
CURLcode ccurl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value);

typedef size_t (*ccurl_data_fn)(char *data, size_t size, size_t count, void *context);
CURLcode ccurl_set_write(CURL *curl, ccurl_data_fn function, void *context);
CURLcode ccurl_set_header(CURL *curl, ccurl_data_fn function, void *context);
CURLcode ccurl_set_read(CURL *curl, ccurl_data_fn function, void *context);

/// Called as a transfer progresses; returning non-zero aborts it (CURLE_ABORTED_BY_CALLBACK).
typedef int (*ccurl_progress_fn)(void *context, curl_off_t download_total, curl_off_t download_now,
                                 curl_off_t upload_total, curl_off_t upload_now);
CURLcode ccurl_set_progress(CURL *curl, ccurl_progress_fn function, void *context);

/// Decides whether curl may connect to an address: `family` is 4 or 6, `address` its 4 or 16
/// bytes in network order. Returns 1 to connect, 0 to refuse.
typedef int (*ccurl_decide_fn)(void *context, int family, const unsigned char *address);
struct ccurl_guard {
    ccurl_decide_fn decide;
    void *context;
};
/// Installs an opensocket callback that extracts each address curl is about to connect to
/// (after DNS, on every connection, redirects included), asks `guard->decide`, and refuses the
/// connection (CURLE_COULDNT_CONNECT) when it says no. The caller owns `guard` and keeps it
/// alive while the handle is used.
CURLcode ccurl_set_address_guard(CURL *curl, struct ccurl_guard *guard);

CURLcode ccurl_getinfo_long(CURL *curl, CURLINFO info, long *value);

#endif
