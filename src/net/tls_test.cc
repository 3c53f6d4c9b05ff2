// TLS: the generated private CA, and HTTPS, WSS and event streams served by HttpServer with
// it, as curl (HttpCall) and WsClient see them with a CA file, a pin, or neither.

#include "net/tls.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/file_util.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "net/net_test_util.h"
#include "net/ws_client.h"

namespace rota::net {
namespace {

using std::chrono::milliseconds;
using testing::WaitFor;

constexpr int64_t kNow = 1'796'000'000;  // 2026-11
constexpr int64_t kDay = 24 * 3600;
const std::vector<std::string> kNames = {"localhost", "127.0.0.1"};

std::string TempDir() {
  char tmpl[] = "/tmp/rota-tls-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "";
}

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 0777;
}

class EchoWs : public WsHandler {
 public:
  void OnOpen(std::shared_ptr<WsConnection> c) override { conn_ = std::move(c); }
  void OnMessage(const std::string& text) override { conn_->Send("echo:" + text); }

 private:
  std::shared_ptr<WsConnection> conn_;
};

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    auto tls = EnsureGeneratedTls(dir_ + "/tls", kNames, kNow);
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    tls_ = *tls;
  }
  void TearDown() override {
    SetClientTls({});
    server_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }

  void StartServer() {
    HttpServerOptions o;
    o.tls = {tls_.cert_file, tls_.key_file};
    o.request_timeout = milliseconds(2000);
    server_ = std::make_unique<HttpServer>(o);
    ASSERT_TRUE(server_
                    ->Route("GET", "/hello",
                            [](const HttpRequest&) { return HttpResponse::Json(200, "{\"hi\":1}"); })
                    .ok());
    ASSERT_TRUE(server_
                    ->AddWebSocket("/ws",
                                   [](const HttpRequest&)
                                       -> std::variant<HttpResponse, std::shared_ptr<WsHandler>> {
                                     return std::make_shared<EchoWs>();
                                   })
                    .ok());
    ASSERT_TRUE(server_
                    ->AddEventStream("/events",
                                     [](const HttpRequest&, std::shared_ptr<EventSink> sink)
                                         -> std::optional<HttpResponse> {
                                       sink->Send("tick", "1");
                                       return std::nullopt;
                                     })
                    .ok());
    auto port = server_->Start();
    ASSERT_TRUE(port.ok()) << port.status().ToString();
    port_ = *port;
  }
  std::string Url(const std::string& scheme, const std::string& path,
                  const std::string& host = "127.0.0.1") const {
    return scheme + "://" + host + ":" + std::to_string(port_) + path;
  }

  std::string dir_;
  GeneratedTls tls_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
};

TEST_F(TlsTest, GeneratedCaAndCertificateAreKeptWithPrivateKeysOnlyForTheOwner) {
  EXPECT_TRUE(tls_.issued);
  EXPECT_EQ(ModeOf(dir_ + "/tls"), 0700u);
  EXPECT_EQ(ModeOf(dir_ + "/tls/ca.key"), 0600u);
  EXPECT_EQ(ModeOf(tls_.key_file), 0600u);
  EXPECT_TRUE(ValidatePin(tls_.pin).ok()) << tls_.pin;
  EXPECT_EQ(tls_.fingerprint.rfind("SHA256:", 0), 0u);
  EXPECT_EQ(tls_.fingerprint.size(), 7u + 32 * 3 - 1);
  // A second start keeps everything.
  auto again = EnsureGeneratedTls(dir_ + "/tls", kNames, kNow + kDay);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->issued);
  EXPECT_EQ(again->pin, tls_.pin);
  EXPECT_EQ(again->fingerprint, tls_.fingerprint);
}

TEST_F(TlsTest, CertificateIsReissuedWithTheSameKeyForANewNameOrNearItsEnd) {
  auto renamed = EnsureGeneratedTls(dir_ + "/tls", {"localhost", "127.0.0.1", "gpu-head"}, kNow);
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_TRUE(renamed->issued);
  EXPECT_EQ(renamed->pin, tls_.pin);  // pinned agents keep working
  auto late = EnsureGeneratedTls(dir_ + "/tls", {"localhost", "127.0.0.1", "gpu-head"},
                                 kNow + 800 * kDay);
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  EXPECT_TRUE(late->issued);
  EXPECT_EQ(late->pin, tls_.pin);
  EXPECT_EQ(late->fingerprint, tls_.fingerprint);
}

TEST_F(TlsTest, BadPinsAreRefusedNamingTheValue) {
  for (const char* bad : {"", "sha256//short", "md5//AAAA", "sha256//!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!="}) {
    Status s = ValidatePin(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(TlsTest, HttpsWithTheCaFileOrThePinIsServedAndAnythingElseRefused) {
  StartServer();
  SetClientTls({.ca_file = tls_.ca_file, .pin = ""});
  auto ok = HttpCall("GET", Url("https", "/hello"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->status, 200);
  auto by_name = HttpCall("GET", Url("https", "/hello", "localhost"));
  ASSERT_TRUE(by_name.ok()) << by_name.status().ToString();

  SetClientTls({.ca_file = "", .pin = tls_.pin});
  auto pinned = HttpCall("GET", Url("https", "/hello"));
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(pinned->status, 200);

  // Another CA, another pin, the system's CAs: refused before any request is sent.
  auto other = EnsureGeneratedTls(dir_ + "/other", kNames, kNow);
  ASSERT_TRUE(other.ok());
  SetClientTls({.ca_file = other->ca_file, .pin = ""});
  EXPECT_EQ(HttpCall("GET", Url("https", "/hello")).status().code(), StatusCode::kUnavailable);
  SetClientTls({.ca_file = "", .pin = other->pin});
  EXPECT_EQ(HttpCall("GET", Url("https", "/hello")).status().code(), StatusCode::kUnavailable);
  SetClientTls({});
  EXPECT_EQ(HttpCall("GET", Url("https", "/hello")).status().code(), StatusCode::kUnavailable);
  // Plain HTTP to the TLS port gets no answer.
  auto plain = HttpCall("GET", Url("http", "/hello"), "", {}, 3000);
  EXPECT_FALSE(plain.ok() && plain->status == 200);
}

TEST_F(TlsTest, WssWithTheCaFileOrThePinEchoesAndAWrongPinIsUnavailableNamingTheUrl) {
  StartServer();
  for (TlsClientConfig trust : {TlsClientConfig{tls_.ca_file, ""}, TlsClientConfig{"", tls_.pin}}) {
    WsClientOptions o;
    o.tls = trust;
    BlockingWsClient c(o);
    ASSERT_TRUE(c.Connect(Url("wss", "/ws")).ok());
    ASSERT_TRUE(c.Send("x"));
    auto got = c.Receive(milliseconds(5000));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, "echo:x");
    c.Close();
  }
  auto other = EnsureGeneratedTls(dir_ + "/other", kNames, kNow);
  ASSERT_TRUE(other.ok());
  for (TlsClientConfig trust : {TlsClientConfig{other->ca_file, ""}, TlsClientConfig{"", other->pin},
                                TlsClientConfig{}}) {
    WsClientOptions o;
    o.tls = trust;
    BlockingWsClient c(o);
    Status s = c.Connect(Url("wss", "/ws"));
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
    EXPECT_NE(s.message().find(Url("wss", "/ws")), std::string::npos) << s.message();
  }
  // ws:// to the TLS port: the server never sees an upgrade.
  WsClientOptions o;
  o.handshake_timeout = milliseconds(2000);
  BlockingWsClient plain(o);
  EXPECT_FALSE(plain.Connect(Url("ws", "/ws")).ok());
}

TEST_F(TlsTest, EventStreamsAreServedOverTls) {
  StartServer();
  SetClientTls({.ca_file = tls_.ca_file, .pin = ""});
  std::string data;
  Status s = ReadEventStream(Url("https", "/events"), {},
                             [&](const std::string& event, const std::string& d) {
                               data = event + "=" + d;
                               return false;
                             });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(data, "tick=1");
}

TEST_F(TlsTest, ReloadServesTheRenewedCertificateToNewConnections) {
  StartServer();
  // A certificate for another key replaces the files (as a renewal with a new key would).
  auto other = EnsureGeneratedTls(dir_ + "/other", kNames, kNow);
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(WriteFileAtomic(tls_.cert_file, *ReadFile(other->cert_file), 0644).ok());
  ASSERT_TRUE(WriteFileAtomic(tls_.key_file, *ReadFile(other->key_file), 0600).ok());
  SetClientTls({.ca_file = "", .pin = other->pin});
  EXPECT_EQ(HttpCall("GET", Url("https", "/hello")).status().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(server_->ReloadTls().ok());
  auto now = HttpCall("GET", Url("https", "/hello"));
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(now->status, 200);
  // A broken file is refused and the working certificate stays.
  ASSERT_TRUE(WriteFileAtomic(tls_.key_file, "not a key", 0600).ok());
  Status bad = server_->ReloadTls();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.ToString();
  EXPECT_TRUE(HttpCall("GET", Url("https", "/hello")).ok());
}

TEST_F(TlsTest, StartRefusesAKeyThatDoesNotMatchTheCertificate) {
  auto other = EnsureGeneratedTls(dir_ + "/other", kNames, kNow);
  ASSERT_TRUE(other.ok());
  HttpServerOptions o;
  o.tls = {tls_.cert_file, other->key_file};
  HttpServer server(o);
  auto port = server.Start();
  ASSERT_FALSE(port.ok());
  EXPECT_EQ(port.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(port.status().message().find(other->key_file), std::string::npos);
  HttpServerOptions missing;
  missing.tls = {dir_ + "/nope.pem", tls_.key_file};
  HttpServer none(missing);
  EXPECT_EQ(none.Start().status().code(), StatusCode::kInvalidArgument);
}

// A TLS client that connects and never sends its hello holds no io thread and is dropped
// after request_timeout (a slowloris on the handshake).
TEST_F(TlsTest, ASilentClientIsDroppedAfterTheRequestTimeout) {
  StartServer();
  auto conn = testing::RawConn::Connect(port_);
  ASSERT_NE(conn, nullptr);
  SetClientTls({.ca_file = tls_.ca_file, .pin = ""});
  EXPECT_TRUE(HttpCall("GET", Url("https", "/hello")).ok());  // others are served meanwhile
  EXPECT_TRUE(conn->WaitClosed(milliseconds(5000)));
}

}  // namespace
}  // namespace rota::net
