#include "CCurlShim.h"
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

CURLcode ccurl_setopt_long(CURL *curl, CURLoption option, long value) { return curl_easy_setopt(curl, option, value); }
CURLcode ccurl_setopt_string(CURL *curl, CURLoption option, const char *value) { return curl_easy_setopt(curl, option, value); }
CURLcode ccurl_setopt_off_t(CURL *curl, CURLoption option, curl_off_t value) { return curl_easy_setopt(curl, option, value); }
CURLcode ccurl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) { return curl_easy_setopt(curl, option, value); }

CURLcode ccurl_set_write(CURL *curl, ccurl_data_fn function, void *context) {
    CURLcode status = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, function);
    return status ? status : curl_easy_setopt(curl, CURLOPT_WRITEDATA, context);
}

CURLcode ccurl_set_header(CURL *curl, ccurl_data_fn function, void *context) {
    CURLcode status = curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, function);
    return status ? status : curl_easy_setopt(curl, CURLOPT_HEADERDATA, context);
}

CURLcode ccurl_set_read(CURL *curl, ccurl_data_fn function, void *context) {
    CURLcode status = curl_easy_setopt(curl, CURLOPT_READFUNCTION, function);
    return status ? status : curl_easy_setopt(curl, CURLOPT_READDATA, context);
}

CURLcode ccurl_set_progress(CURL *curl, ccurl_progress_fn function, void *context) {
    CURLcode status = curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, function);
    if (!status) status = curl_easy_setopt(curl, CURLOPT_XFERINFODATA, context);
    return status ? status : curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
}

static curl_socket_t guarded_open(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    struct ccurl_guard *guard = clientp;
    if (purpose == CURLSOCKTYPE_IPCXN && guard && guard->decide) {
        int allowed = 0;
        if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
            const struct sockaddr_in *in = (const struct sockaddr_in *)&address->addr;
            allowed = guard->decide(guard->context, 4, (const unsigned char *)&in->sin_addr);
        } else if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&address->addr;
            allowed = guard->decide(guard->context, 6, (const unsigned char *)&in6->sin6_addr);
        }
        if (!allowed) {
            return CURL_SOCKET_BAD;
        }
    }
    return socket(address->family, address->socktype, address->protocol);
}

CURLcode ccurl_set_address_guard(CURL *curl, struct ccurl_guard *guard) {
    CURLcode status = curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, guarded_open);
    return status ? status : curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, guard);
}

CURLcode ccurl_getinfo_long(CURL *curl, CURLINFO info, long *value) { return curl_easy_getinfo(curl, info, value); }
