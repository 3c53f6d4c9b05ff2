#include "server/leadership/forwarded_client.h"

#include <gtest/gtest.h>

#include "server/leadership/proxy.h"

namespace rota::server::leadership {
namespace {

const std::string kKey = "0123456789abcdef0123456789abcdef";

net::HttpRequest Request(const std::string& method, const std::string& target) {
  net::HttpRequest r;
  r.method = method;
  r.target = target;
  r.path = target;
  r.remote_addr = "10.0.0.2:41000";  // the follower
  return r;
}

// Puts "Name: value" lines into the request's headers as the server's parser does.
void AddHeaders(net::HttpRequest* r, const std::vector<std::string>& lines) {
  for (const std::string& l : lines) {
    const size_t colon = l.find(':');
    std::string name = l.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r->headers[name] = l.substr(colon + 2);
  }
}

TEST(ForwardedClient, TheLeaderAdoptsASignedAddressAndOnlyThat) {
  net::HttpRequest at_leader = Request("POST", "/api/v1/auth/login");
  AddHeaders(&at_leader, SignedClientHeaders(kKey, at_leader, "192.0.2.7"));
  EXPECT_TRUE(AdoptForwardedClient(kKey, &at_leader));
  EXPECT_EQ(at_leader.remote_addr, "192.0.2.7:0");
}

TEST(ForwardedClient, ForgedOrMovedSignaturesAreNotBelieved) {
  net::HttpRequest signed_req = Request("POST", "/api/v1/auth/login");
  const auto lines = SignedClientHeaders(kKey, signed_req, "192.0.2.7");

  net::HttpRequest other_key = Request("POST", "/api/v1/auth/login");
  AddHeaders(&other_key, lines);
  EXPECT_FALSE(AdoptForwardedClient("another key of the same length!!", &other_key));
  EXPECT_EQ(other_key.remote_addr, "10.0.0.2:41000");

  net::HttpRequest other_target = Request("POST", "/api/v1/users");  // replayed elsewhere
  AddHeaders(&other_target, lines);
  EXPECT_FALSE(AdoptForwardedClient(kKey, &other_target));

  net::HttpRequest other_address = Request("POST", "/api/v1/auth/login");
  AddHeaders(&other_address, lines);
  other_address.headers["x-rota-client"] = "192.0.2.8";
  EXPECT_FALSE(AdoptForwardedClient(kKey, &other_address));
  EXPECT_EQ(other_address.remote_addr, "10.0.0.2:41000");

  net::HttpRequest junk = Request("GET", "/");
  junk.headers["x-rota-client"] = "1.2.3.4\r\nX: y";
  junk.headers["x-rota-client-sig"] = "00";
  EXPECT_FALSE(AdoptForwardedClient(kKey, &junk));
  net::HttpRequest none = Request("GET", "/");
  EXPECT_FALSE(AdoptForwardedClient(kKey, &none));
  EXPECT_FALSE(AdoptForwardedClient("", &none));
}

TEST(ForwardedClient, AFollowerSignsTheClientsAddressAndDropsWhatTheClientClaimed) {
  net::HttpRequest at_follower = Request("POST", "/api/v1/auth/login");
  at_follower.remote_addr = "198.51.100.9:5555";
  at_follower.headers["x-rota-client"] = "203.0.113.1";  // the client's own claim
  at_follower.headers["x-rota-client-sig"] = "forged";
  const auto headers = ForwardedHeaders(at_follower, "follower-1", kKey);
  net::HttpRequest at_leader = Request("POST", "/api/v1/auth/login");
  AddHeaders(&at_leader, headers);
  EXPECT_EQ(at_leader.Header("x-rota-client"), "198.51.100.9");
  ASSERT_TRUE(AdoptForwardedClient(kKey, &at_leader));
  EXPECT_EQ(at_leader.remote_addr, "198.51.100.9:0");
}

}  // namespace
}  // namespace rota::server::leadership
