#include "server/secrets/secret_box.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "common/file_util.h"
#include "server/store/store_test_util.h"

namespace rota::server {
namespace {

const std::string kKey1 = std::string(64, 'a');
const std::string kKey2 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

SecretBox Box(const std::string& text) {
  auto b = SecretBox::FromText(text);
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  return b.ok() ? std::move(*b) : SecretBox({{1, std::string(32, 'x')}});
}

TEST(SecretBoxTest, SealsUnderTheLastKeyAndOpensWithAnyListedOne) {
  SecretBox one = Box("1 " + kKey1 + "\n");
  auto sealed = one.Seal("wandb", "hunter2");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->key_id, 1);
  // Nonce + ciphertext + tag, hex: no plaintext in it.
  EXPECT_EQ(sealed->sealed_hex.size(), 2u * (12 + 7 + 16));
  EXPECT_EQ(sealed->sealed_hex.find("hunter2"), std::string::npos);
  // A fresh nonce each time.
  EXPECT_NE(one.Seal("wandb", "hunter2")->sealed_hex, sealed->sealed_hex);

  SecretBox rotated = Box("# rota secret keys\n1 " + kKey1 + "\n2 " + kKey2 + "\n");
  EXPECT_EQ(rotated.current_key_id(), 2);
  auto opened = rotated.Open("wandb", *sealed);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, "hunter2");
  auto newer = rotated.Seal("wandb", std::string("bin\0ary", 7));
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(newer->key_id, 2);
  EXPECT_EQ(*rotated.Open("wandb", *newer), std::string("bin\0ary", 7));
  // The old ring does not hold key 2.
  auto missing = one.Open("wandb", *newer);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("key 2"), std::string::npos);
}

TEST(SecretBoxTest, DetectsEveryTamperingAndAnotherNameOrKey) {
  SecretBox box = Box("1 " + kKey1 + "\n2 " + kKey2 + "\n");
  auto sealed = box.Seal("s3", "AKIA-secret-value");
  ASSERT_TRUE(sealed.ok());
  // Each byte flipped (nonce, ciphertext, tag) fails to authenticate.
  for (size_t i = 0; i < sealed->sealed_hex.size(); i += 2) {
    SealedValue bad = *sealed;
    bad.sealed_hex[i] = bad.sealed_hex[i] == '0' ? '1' : '0';
    auto r = box.Open("s3", bad);
    ASSERT_FALSE(r.ok()) << "byte " << i / 2;
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  }
  // Copied onto another secret's name: refused (the name is authenticated).
  EXPECT_FALSE(box.Open("s4", *sealed).ok());
  // Claimed to be under the other key: refused.
  SealedValue other_key = *sealed;
  other_key.key_id = 1;
  EXPECT_FALSE(box.Open("s3", other_key).ok());
  // Truncated or not hex.
  EXPECT_FALSE(box.Open("s3", {2, sealed->sealed_hex.substr(0, 40)}).ok());
  EXPECT_FALSE(box.Open("s3", {2, "zz" + sealed->sealed_hex.substr(2)}).ok());
  EXPECT_FALSE(box.Open("s3", {2, ""}).ok());
}

TEST(SecretBoxTest, RefusesMalformedKeyrings) {
  const std::vector<std::string> bad = {
      "", "# nothing\n", "1\n", "x " + kKey1, "0 " + kKey1, "1 " + kKey1.substr(2), "1 " + kKey1 + "zz",
      "2 " + kKey1 + "\n1 " + kKey2, "1 " + kKey1 + "\n1 " + kKey2, "3000000000 " + kKey1};
  for (const std::string& text : bad) {
    auto b = SecretBox::FromText(text);
    EXPECT_FALSE(b.ok()) << text;
    if (!b.ok()) {
      EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << text;
    }
  }
}

TEST(SecretBoxTest, TheKeyringIsMadeOnceOwnerOnlyAndRotatedByAppending) {
  store::testing::TempDir dir;
  auto a = SecretBox::LoadOrCreate(dir.path());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::string path = dir.path() + "/secret-keys";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto sealed = a->Seal("x", "v");
  ASSERT_TRUE(sealed.ok());
  // A restart reads the same key.
  auto b = SecretBox::LoadOrCreate(dir.path());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b->Open("x", *sealed), "v");
  // Rotation: a new line; old values still open, new ones use key 2.
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  auto line = SecretBox::NextKeyLine(*text);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->rfind("2 ", 0), 0u);
  ASSERT_TRUE(WriteFileAtomic(path, *text + *line, 0600).ok());
  auto c = SecretBox::LoadOrCreate(dir.path());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->current_key_id(), 2);
  EXPECT_EQ(*c->Open("x", *sealed), "v");
  // Readable by others: refused.
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto d = SecretBox::LoadOrCreate(dir.path());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("chmod 600"), std::string::npos);
}

}  // namespace
}  // namespace rota::server
