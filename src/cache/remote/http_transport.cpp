// The HTTP backend (transport.h) through libcurl: GET/PUT of URL/<key>.bundle.
#include "cache/remote/credentials.h"
#include "cache/remote/transport.h"
#include "util/safe_open.h"
#include "util/shared_library.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <curl/curl.h>

namespace npucc::cache::remote {

namespace fs = std::filesystem;

namespace {

// A transfer slower than k_low_speed_bytes a second for k_low_speed_seconds (or the whole
// timeout, when shorter) is abandoned.
constexpr long k_low_speed_bytes = 1024;
constexpr long k_low_speed_seconds = 10;

// Owns a FILE*.
struct File {
  std::FILE* file = nullptr;
  ~File() {
    if (file != nullptr) {
      std::fclose(file);
    }
  }
};

// libcurl's functions, loaded when the first HTTP transport is made
// (util/shared_library.h): runs without a remote cache never load it.
#define NPUCC_CURL_FUNCTION(name)                                                                  \
  decltype(&::curl_##name) name = library.function<decltype(&::curl_##name)>("curl_" #name)
struct Curl {
  util::SharedLibrary library{NPUCC_LIBCURL_SONAME, NPUCC_LIBCURL_PACKAGE};
  NPUCC_CURL_FUNCTION(global_init);
  NPUCC_CURL_FUNCTION(easy_init);
  NPUCC_CURL_FUNCTION(easy_setopt);
  NPUCC_CURL_FUNCTION(easy_getinfo);
  NPUCC_CURL_FUNCTION(easy_perform);
  NPUCC_CURL_FUNCTION(easy_strerror);
  NPUCC_CURL_FUNCTION(easy_cleanup);
  NPUCC_CURL_FUNCTION(slist_append);
  NPUCC_CURL_FUNCTION(slist_free_all);

  Curl() { global_init(CURL_GLOBAL_DEFAULT); }
};
#undef NPUCC_CURL_FUNCTION

// Throws npucc::Error when libcurl cannot be loaded; tries again at the next call.
const Curl& curl() {
  static const Curl loaded;
  return loaded;
}

struct Easy {
  CURL* handle = curl().easy_init();
  curl_slist* headers = nullptr;
  ~Easy() {
    curl().slist_free_all(headers);
    if (handle != nullptr) {
      curl().easy_cleanup(handle);
    }
  }
};

class HttpTransport : public Transport {
public:
  explicit HttpTransport(const RemoteCacheConfig& config)
      : m_config(config), m_credentials(load_credentials(config)) {
    curl();
    if (!m_credentials.token.empty()) {
      m_bearer = "Authorization: Bearer " + m_credentials.token;
    }
    m_base = config.url;
    while (!m_base.empty() && m_base.back() == '/') {
      m_base.pop_back();
    }
  }

  std::string describe() const override { return m_config.url; }

  TransferResult get(const std::string& key, BundleReceiver& receiver) override {
    Easy easy;
    configure(easy, key);
    Download download{easy.handle, &receiver};
    curl().easy_setopt(easy.handle, CURLOPT_WRITEFUNCTION, &HttpTransport::on_data);
    curl().easy_setopt(easy.handle, CURLOPT_WRITEDATA, &download);
    // Large reads: fewer recv() calls per object (libcurl still hands each read over in
    // pieces of at most 16 KiB, CURL_MAX_WRITE_SIZE; the receiver gathers them).
    curl().easy_setopt(easy.handle, CURLOPT_BUFFERSIZE, 512L * 1024);
    return perform(easy, "GET", &download);
  }

  TransferResult put(const std::string& key, const fs::path& from) override {
    // The bundle npucc staged, opened as util/safe_open.h opens anything in a cache or
    // TMPDIR; its size is the descriptor's.
    util::Expected<util::OpenedFile> opened = util::open_regular_file(from);
    File in;
    if (opened) {
      in.file = ::fdopen(opened->fd.get(), "rb");
    }
    if (in.file == nullptr) {
      return {Status::error,
              opened ? from.string() + ": cannot read the bundle" : opened.error().what(), 0};
    }
    opened->fd.release(); // the FILE owns it now
    const auto size = static_cast<uint64_t>(opened->info.st_size);
    Easy easy;
    configure(easy, key);
    curl().easy_setopt(easy.handle, CURLOPT_UPLOAD, 1L);
    curl().easy_setopt(easy.handle, CURLOPT_READDATA, in.file);
    curl().easy_setopt(easy.handle, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(size));
    // No "Expect: 100-continue" round trip before the body (configure set the others).
    easy.headers = curl().slist_append(easy.headers, "Expect:");
    curl().easy_setopt(easy.handle, CURLOPT_HTTPHEADER, easy.headers);
    TransferResult result = perform(easy, "PUT");
    if (result.status == Status::absent) {
      result = {Status::error, m_config.url + ": PUT refused (404)", 0};
    }
    return result;
  }

  std::optional<std::vector<RemoteObject>> list(std::string&) override { return std::nullopt; }

private:
  struct Download {
    CURL* handle;
    BundleReceiver* receiver;
    bool started = false;
    bool ignore = false; // an error page's body
  };

  static size_t on_data(char* data, size_t, size_t size, void* user) {
    auto* download = static_cast<Download*>(user);
    if (!download->started) {
      download->started = true;
      long http = 0;
      curl().easy_getinfo(download->handle, CURLINFO_RESPONSE_CODE, &http);
      download->ignore = http < 200 || http > 299;
      curl_off_t length = -1;
      curl().easy_getinfo(download->handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
      if (!download->ignore && length >= 0) {
        download->receiver->expect_size(static_cast<uint64_t>(length));
      }
    }
    if (download->ignore) {
      // An error page's body is never read: a server trickling an endless one must not
      // hold the transfer. Stopping here ends it; perform() reports the status.
      return 0;
    }
    return download->receiver->feed(data, size) ? size : 0;
  }

  std::string url_of(const std::string& key) const { return m_base + "/" + key + ".bundle"; }

  void configure(Easy& easy, const std::string& key) const {
    CURL* handle = easy.handle;
    std::string url = url_of(key);
    curl().easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl().easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    curl().easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
    curl().easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS,
                       static_cast<long>(std::lround(m_config.connect_timeout * 1000)));
    // The whole transfer (connect, headers, body) ends `timeout` seconds after it began,
    // whatever the server sends: a trickle of a few bytes a second never holds a compile.
    curl().easy_setopt(handle, CURLOPT_TIMEOUT_MS,
                       std::max(1L, static_cast<long>(std::lround(m_config.timeout * 1000))));
    // And, with a long deadline (large bundles), a stalled one sooner: under
    // k_low_speed_bytes a second for k_low_speed_seconds.
    curl().easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, k_low_speed_bytes);
    curl().easy_setopt(handle, CURLOPT_LOW_SPEED_TIME,
                       std::clamp(static_cast<long>(std::lround(m_config.timeout)), 1L,
                                  k_low_speed_seconds));
    curl().easy_setopt(handle, CURLOPT_USERAGENT, "npucc");
    authenticate(easy);
  }

  // Credentials and TLS material go to libcurl only; its error texts never hold them.
  void authenticate(Easy& easy) const {
    CURL* handle = easy.handle;
    if (!m_bearer.empty()) {
      easy.headers = curl().slist_append(easy.headers, m_bearer.c_str());
      curl().easy_setopt(handle, CURLOPT_HTTPHEADER, easy.headers);
    }
    if (!m_credentials.user.empty()) {
      curl().easy_setopt(handle, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
      curl().easy_setopt(handle, CURLOPT_USERNAME, m_credentials.user.c_str());
      curl().easy_setopt(handle, CURLOPT_PASSWORD, m_credentials.password.c_str());
    }
    if (!m_config.ca_file.empty()) {
      curl().easy_setopt(handle, CURLOPT_CAINFO, m_config.ca_file.c_str());
    }
    if (!m_config.client_cert.empty()) {
      curl().easy_setopt(handle, CURLOPT_SSLCERT, m_config.client_cert.c_str());
    }
    if (!m_config.client_key.empty()) {
      curl().easy_setopt(handle, CURLOPT_SSLKEY, m_config.client_key.c_str());
    }
  }

  // `download`: a GET's, whose error page on_data stopped reading (CURLE_WRITE_ERROR,
  // which the status below then explains).
  TransferResult perform(Easy& easy, const char* method, const Download* download = nullptr) const {
    if (easy.handle == nullptr) {
      return {Status::error, "cannot start libcurl", 0};
    }
    char error[CURL_ERROR_SIZE] = {0};
    curl().easy_setopt(easy.handle, CURLOPT_ERRORBUFFER, error);
    CURLcode code = curl().easy_perform(easy.handle);
    curl_off_t down = 0;
    curl_off_t up = 0;
    curl().easy_getinfo(easy.handle, CURLINFO_SIZE_DOWNLOAD_T, &down);
    curl().easy_getinfo(easy.handle, CURLINFO_SIZE_UPLOAD_T, &up);
    uint64_t bytes = static_cast<uint64_t>(down + up);
    const bool error_page_cut = code == CURLE_WRITE_ERROR && download != nullptr && download->ignore;
    if (code != CURLE_OK && !error_page_cut) {
      std::string why = error[0] != '\0' ? error : curl().easy_strerror(code);
      return {Status::error, m_config.url + ": " + method + " failed: " + why, bytes};
    }
    long http = 0;
    curl().easy_getinfo(easy.handle, CURLINFO_RESPONSE_CODE, &http);
    if (http == 404) {
      return {Status::absent, "", bytes};
    }
    if (http == 401 || http == 403) {
      return {Status::refused,
              m_config.url + ": " + method + " answered HTTP " + std::to_string(http), bytes};
    }
    if (http < 200 || http > 299) {
      return {Status::error,
              m_config.url + ": " + method + " answered HTTP " + std::to_string(http), bytes};
    }
    return {Status::ok, "", bytes};
  }

  RemoteCacheConfig m_config;
  Credentials m_credentials;
  std::string m_bearer; // the header line
  std::string m_base;
};

} // namespace

std::unique_ptr<Transport> make_http_transport(const RemoteCacheConfig& config) {
  return std::make_unique<HttpTransport>(config);
}

} // namespace npucc::cache::remote
