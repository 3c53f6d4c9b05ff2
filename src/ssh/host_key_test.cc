#include "ssh/host_key.h"

#include <gtest/gtest.h>

namespace rota::ssh {
namespace {

// Made with ssh-keygen; the fingerprints are what `ssh-keygen -lf KEY.pub` printed.
constexpr char kEd25519[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIslU/Jby6H1EhG15arHuV032jZGE8liZePztHsIO5HP";
constexpr char kEd25519Fp[] = "SHA256:bDef0kQUqd/V7JzIzzAmIDLcLFqo8wLaWp0lHSVuVZo";
constexpr char kOtherEd25519[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBrlzcbOzBPUtNZbfBF6n9dnpjE8kRlJsYkl3tTgkLAm";
constexpr char kOtherEd25519Fp[] = "SHA256:MoqlilUWFWy+uX3c2S31QtMAaXMoyowHVRXPDgHTojo";
constexpr char kEcdsa[] =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBE+k+"
    "pJKLPibj5J9fzrKlM7KBwBDschQ9vWFV3MCu+1Zf1+LZZLhwtaRqfieYivATyWxU3b/mcJPHfO0DRv3LpI=";
constexpr char kEcdsaFp[] = "SHA256:jb3tImH7IvmvEPmSsnevXaxa2vYCO9PIlidvWV6n82c";
constexpr char kRsa[] =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQC45/C+CNYRkMR9ndYbvk2eelFTBDHs8FeC6e8f+CkuV3sWdQ+VlKYpBuPN+"
    "HSm+5p04vBi3Ll4p5x6wkCnEywxqXOlpNLMEDH2Wv8BxcpNNk205c+XOSfXipMYSQskUuA2i1a3t1zoBuzIHKifzLOumJ8"
    "YGwvenM5Mn+VDbw6Jkw==";
constexpr char kRsaFp[] = "SHA256:5bR6PwFs1I7ecP0XsDbpVwqSEnPWlJlrrN5/ClK5uoY";

HostKey Key(const char* line) {
  auto k = ParseHostKey(line);
  EXPECT_TRUE(k.ok()) << line << ": " << k.status().ToString();
  return k.ok() ? *k : HostKey{};
}

TEST(HostKeyTest, FingerprintsAreThoseSshKeygenPrints) {
  struct Case {
    const char* line;
    const char* fingerprint;
    const char* described;
  };
  for (const Case& c : {Case{kEd25519, kEd25519Fp, " (ED25519)"},
                        Case{kEcdsa, kEcdsaFp, " (ECDSA)"}, Case{kRsa, kRsaFp, " (RSA)"}}) {
    HostKey k = Key(c.line);
    EXPECT_EQ(k.Fingerprint(), c.fingerprint) << c.line;
    EXPECT_EQ(k.Describe(), std::string(c.fingerprint) + c.described);
    EXPECT_EQ(k.Line(), c.line);  // round trip
  }
}

TEST(HostKeyTest, AcceptsPubFileAndKnownHostsLines) {
  HostKey bare = Key(kEd25519);
  EXPECT_EQ(bare.type, "ssh-ed25519");
  EXPECT_EQ(Key((std::string(kEd25519) + " root@node-7\n").c_str()), bare);    // .pub with comment
  EXPECT_EQ(Key(("[10.0.0.5]:2222 " + std::string(kEd25519)).c_str()), bare);  // ssh-keyscan
  EXPECT_EQ(Key(("  node-7\t" + std::string(kEd25519)).c_str()), bare);
}

TEST(HostKeyTest, RefusesWhatIsNotAHostKey) {
  const std::string ed_b64 = std::string(kEd25519).substr(12);
  const std::string rsa_b64 = std::string(kRsa).substr(8);
  for (const std::string& bad : {
           std::string(""), std::string("ssh-ed25519"), std::string("garbage"),
           "ssh-dsa " + ed_b64,                           // unknown type
           "ssh-ed25519-cert-v01@openssh.com " + ed_b64,  // certificate
           "ssh-ed25519 " + ed_b64.substr(0, 20),         // cut short
           "ssh-ed25519 " + ed_b64 + "!",                 // not base64
           "ssh-ed25519 " + rsa_b64,                      // blob of another type
           std::string("ssh-ed25519 AAAA"),               // empty blob
           std::string("ssh-ed25519 ////"),               // length beyond the data
       }) {
    auto k = ParseHostKey(bad);
    EXPECT_FALSE(k.ok()) << bad;
    if (!k.ok()) {
      EXPECT_EQ(k.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
  auto cert = ParseHostKey("ssh-ed25519-cert-v01@openssh.com " + ed_b64);
  EXPECT_NE(cert.status().message().find("certificate"), std::string::npos);
}

TEST(HostKeyTest, PinsAreKeysOrSha256Fingerprints) {
  HostKey ed = Key(kEd25519), other = Key(kOtherEd25519);

  auto by_key = ParseHostKeyPin(std::string(kEd25519) + " root@vm\n");
  ASSERT_TRUE(by_key.ok()) << by_key.status().ToString();
  ASSERT_TRUE(by_key->key.has_value());
  EXPECT_EQ(by_key->fingerprint, kEd25519Fp);
  EXPECT_TRUE(by_key->Matches(ed));
  EXPECT_FALSE(by_key->Matches(other));
  EXPECT_EQ(by_key->Describe(), std::string(kEd25519Fp) + " (ED25519)");

  for (const std::string& fp : {std::string(kEd25519Fp), std::string(kEd25519Fp) + "=",
                                " " + std::string(kEd25519Fp) + "\n"}) {
    auto pin = ParseHostKeyPin(fp);
    ASSERT_TRUE(pin.ok()) << fp << ": " << pin.status().ToString();
    EXPECT_FALSE(pin->key.has_value());
    EXPECT_EQ(pin->fingerprint, kEd25519Fp);
    EXPECT_TRUE(pin->Matches(ed));
    EXPECT_FALSE(pin->Matches(other));
  }
}

TEST(HostKeyTest, RefusesBadPins) {
  const std::string fp = kEd25519Fp;
  for (const std::string& bad : {
           std::string(""),
           std::string("yes"),
           std::string("SHA256:"),
           fp.substr(0, fp.size() - 1),       // 42 characters
           fp + "AA",                         // 45
           "SHA256:" + std::string(43, '!'),  // not base64
           std::string("sha256:") + fp.substr(7),
           std::string("MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48"),
           std::string("ssh-ed25519 AAAA"),
       }) {
    auto pin = ParseHostKeyPin(bad);
    EXPECT_FALSE(pin.ok()) << bad;
    if (!pin.ok()) {
      EXPECT_EQ(pin.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
  EXPECT_NE(ParseHostKeyPin("MD5:16:27").status().message().find("SHA256"), std::string::npos);
  EXPECT_NE(ParseHostKeyPin("garbage").status().message().find("SHA256:... fingerprint"),
            std::string::npos);
}

TEST(HostKeyTest, ParsesKeyscanOutput) {
  const std::string out = "# 10.0.0.5:2222 SSH-2.0-OpenSSH_9.2p1\n[10.0.0.5]:2222 " +
                          std::string(kRsa) + "\n\n[10.0.0.5]:2222 ssh-foo AAAA\n[10.0.0.5]:2222 " +
                          kEd25519 + "\n[10.0.0.5]:2222 " + kEcdsa;
  auto keys = ParseKeyscan(out);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0], Key(kRsa));
  EXPECT_EQ(keys[1], Key(kEd25519));
  EXPECT_EQ(keys[2], Key(kEcdsa));
  EXPECT_TRUE(ParseKeyscan("").empty());
}

TEST(HostKeyTest, ChoosesThePinnedKeyOrTheStrongest) {
  const std::vector<HostKey> seen = {Key(kRsa), Key(kEcdsa), Key(kEd25519)};
  auto best = ChooseHostKey(seen, nullptr, "10.0.0.5:22");
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->type, "ssh-ed25519");
  EXPECT_EQ(ChooseHostKey({Key(kRsa), Key(kEcdsa)}, nullptr, "h")->type, "ecdsa-sha2-nistp256");

  auto pin = ParseHostKeyPin(kRsaFp);
  ASSERT_TRUE(pin.ok());
  auto pinned = ChooseHostKey(seen, &*pin, "10.0.0.5:22");
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(pinned->type, "ssh-rsa");

  // A pin that matches nothing: refused naming the pin and every key seen.
  auto wrong = ParseHostKeyPin(kOtherEd25519);
  ASSERT_TRUE(wrong.ok());
  auto refused = ChooseHostKey(seen, &*wrong, "10.0.0.5:22");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kConflict);
  for (const char* fp : {kOtherEd25519Fp, kEd25519Fp, kEcdsaFp, kRsaFp}) {
    EXPECT_NE(refused.status().message().find(fp), std::string::npos) << refused.status().message();
  }
  EXPECT_NE(refused.status().message().find("10.0.0.5:22"), std::string::npos);

  auto none = ChooseHostKey({}, nullptr, "10.0.0.5:22");
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
}

TEST(HostKeyTest, KnownHostsLineNamesHostAsSshLooksItUp) {
  HostKey k = Key(kEd25519);
  EXPECT_EQ(KnownHostsLine(SshTarget{"root", "node-7", 22}, k), "node-7 " + std::string(kEd25519));
  EXPECT_EQ(KnownHostsLine(SshTarget{"root", "10.0.0.5", 2222}, k),
            "[10.0.0.5]:2222 " + std::string(kEd25519));
  EXPECT_EQ(KnownHostsLine(SshTarget{"root", "::1", 2222}, k),
            "[::1]:2222 " + std::string(kEd25519));
  auto argv = KeyscanArgv(SshTarget{"root", "10.0.0.5", 2222}, 5);
  EXPECT_EQ(argv.front(), "ssh-keyscan");
  EXPECT_EQ(argv[argv.size() - 2], "--");
  EXPECT_EQ(argv.back(), "10.0.0.5");
}

}  // namespace
}  // namespace rota::ssh
