#include "notify/mime.h"

#include <gtest/gtest.h>

#include "notify/notify_test_util.h"

namespace rota::notify {
namespace {

using testing::DecodeHeaderValue;
using testing::DecodeQuotedPrintable;
using testing::ParseMessage;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t end = text.find("\r\n", start);
    out.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return out;
    start = end + 2;
  }
}

TEST(MimeTest, AcceptsPlainAddresses) {
  for (const char* ok : {"a@b", "alice@example.com", "first.last+tag@sub.example.co.uk",
                         "o'brien@x-y.org", "A_Z=1!#$%&*/?^`{|}~@host"}) {
    EXPECT_TRUE(IsValidAddress(ok)) << ok;
  }
}

TEST(MimeTest, RejectsMalformedAddresses) {
  for (const char* bad : {"",
                          "alice",
                          "@example.com",
                          "alice@",
                          "a@@b",
                          "a b@c.d",
                          "a@b c.d",
                          ".a@b.c",
                          "a.@b.c",
                          "a..b@c.d",
                          "a@-b.c",
                          "a@b-.c",
                          "a@b..c",
                          "a@b.c\r\nBcc: x@y.z",
                          "a@b.c\n",
                          "<a@b.c>",
                          "a@b.c>",
                          "\"a\"@b.c",
                          "a@[127.0.0.1]",
                          "j\xC3\xB6rg@example.com",
                          "a,b@c.d"}) {
    EXPECT_FALSE(IsValidAddress(bad)) << bad;
  }
  EXPECT_FALSE(IsValidAddress(std::string(65, 'a') + "@b.c"));
  EXPECT_FALSE(IsValidAddress("a@" + std::string(64, 'b') + ".c"));
}

TEST(MimeTest, ParsesMailboxForms) {
  Result<Mailbox> m = ParseMailbox("  Rota Bot <rota@example.com> ", "smtp.from");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->display_name, "Rota Bot");
  EXPECT_EQ(m->address, "rota@example.com");
  m = ParseMailbox("\"Rota, GPUs\" <r@x.org>", "smtp.from");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->display_name, "Rota, GPUs");
  m = ParseMailbox("r@x.org", "smtp.from");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->display_name, "");
  EXPECT_EQ(m->address, "r@x.org");

  for (const char* bad :
       {"Rota <r@x.org>\r\nBcc: y@z.org", "Rota r@x.org>", "Rota <nope>", "R\"o <r@x.org>", ""}) {
    Result<Mailbox> r = ParseMailbox(bad, "smtp.from");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("smtp.from"), std::string::npos) << r.status().message();
  }
}

TEST(MimeTest, ValidatesUtf8) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("Gr\xC3\xBC\xC3\x9F \xE2\x80\x94 \xF0\x9F\x9A\x80"));
  for (const char* bad :
       {"\xC3", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF", "a\x80"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
  }
}

TEST(MimeTest, HeaderTextStaysAsciiOrBecomesEncodedWords) {
  EXPECT_EQ(EncodeHeaderText("GPU 3 is busy"), "GPU 3 is busy");
  // "=?" in plain text would be read as an encoded word; it is encoded instead.
  EXPECT_NE(EncodeHeaderText("a =?x?= b"), "a =?x?= b");
  EXPECT_EQ(DecodeHeaderValue(EncodeHeaderText("a =?x?= b")), "a =?x?= b");

  std::string subject;
  for (int i = 0; i < 30; ++i) subject += "Gr\xC3\xBC\xC3\x9F\xE2\x80\x94\xF0\x9F\x9A\x80 ";
  std::string enc = EncodeHeaderText(subject);
  EXPECT_EQ(DecodeHeaderValue(enc), subject);
  for (const std::string& line : Lines(enc)) {
    EXPECT_LE(line.size(), 66u) << line;  // a 64-character word plus the folding space
    for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << line;
  }
  // No encoded word holds a partial UTF-8 sequence.
  for (const std::string& line : Lines(enc)) {
    std::string word = line.substr(line.find("=?"));
    std::string decoded = DecodeHeaderValue(word);
    EXPECT_TRUE(IsValidUtf8(decoded)) << line;
  }
}

TEST(MimeTest, QuotedPrintableRoundTripsAndKeepsLinesShort) {
  std::string text = "Hello,\n. a dot line\r\n" + std::string(200, 'x') + "\nend with space \n" +
                     "tab\t\n=equals= \xC3\xBC\xE2\x80\x94\n.\n" + std::string(74, 'y') + ".z\n";
  std::string qp = EncodeQuotedPrintable(text);
  std::string want;  // line ends as CRLF
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) want += '\r';
    want += text[i];
  }
  EXPECT_EQ(DecodeQuotedPrintable(qp), want);
  for (const std::string& line : Lines(qp)) {
    EXPECT_LE(line.size(), 76u) << line;
    EXPECT_FALSE(!line.empty() && line[0] == '.') << "line starts with '.': " << line;
    EXPECT_FALSE(!line.empty() && (line.back() == ' ' || line.back() == '\t')) << line;
    for (char c : line) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << line;
  }
}

TEST(MimeTest, FormatsRfc5322Dates) {
  EXPECT_EQ(FormatRfc5322Date(1'700'000'000'123), "Tue, 14 Nov 2023 22:13:20 +0000");
  EXPECT_EQ(FormatRfc5322Date(0), "Thu, 01 Jan 1970 00:00:00 +0000");
}

TEST(MimeTest, BuildsMultipartAlternative) {
  MimeInput in{{"Rota \xE2\x9C\x93", "rota@example.com"},
               {"a@example.com", "b@example.org"},
               "Hello \xE2\x80\x94 GPU",
               "text body\n",
               "<p>html body</p>",
               1'700'000'000'000,
               "abc123"};
  std::string msg = BuildMimeMessage(in);
  testing::ParsedMessage p = ParseMessage(msg);
  EXPECT_EQ(p.headers["date"], "Tue, 14 Nov 2023 22:13:20 +0000");
  EXPECT_EQ(DecodeHeaderValue(p.headers["from"]), "Rota \xE2\x9C\x93 <rota@example.com>");
  EXPECT_EQ(p.headers["to"], "a@example.com, b@example.org");
  EXPECT_EQ(DecodeHeaderValue(p.headers["subject"]), "Hello \xE2\x80\x94 GPU");
  EXPECT_EQ(p.headers["message-id"], "<abc123.1700000000000@example.com>");
  EXPECT_EQ(p.headers["mime-version"], "1.0");
  EXPECT_EQ(p.headers["auto-submitted"], "auto-generated");
  EXPECT_EQ(p.headers["content-type"], "multipart/alternative; boundary=\"=_rota_abc123\"");
  EXPECT_EQ(p.parts["text/plain"], "text body\r\n");
  EXPECT_EQ(p.parts["text/html"], "<p>html body</p>");
  EXPECT_NE(msg.find("\r\n--=_rota_abc123--\r\n"), std::string::npos);
  // Every line is CRLF-terminated and short (no bare LF).
  for (size_t i = 0; i < msg.size(); ++i) {
    if (msg[i] == '\n') {
      EXPECT_EQ(msg[i - 1], '\r') << "bare LF at " << i;
    }
  }
}

TEST(MimeTest, SinglePartWhenOnlyTextOrOnlyHtml) {
  MimeInput in{{"", "r@x.org"}, {"a@x.org"}, "s", "only text", "", 0, "u1"};
  testing::ParsedMessage p = ParseMessage(BuildMimeMessage(in));
  EXPECT_EQ(p.headers["content-type"], "text/plain; charset=UTF-8");
  EXPECT_EQ(p.headers["from"], "r@x.org");
  in.text = "";
  in.html = "<b>x</b>";
  p = ParseMessage(BuildMimeMessage(in));
  EXPECT_EQ(p.headers["content-type"], "text/html; charset=UTF-8");
}

TEST(MimeTest, FoldsLongRecipientLists) {
  MimeInput in{{"", "r@x.org"}, {}, "s", "t", "", 0, "u"};
  for (int i = 0; i < 10; ++i) in.to.push_back("user" + std::to_string(i) + "@example.com");
  std::string msg = BuildMimeMessage(in);
  std::string head = msg.substr(0, msg.find("\r\n\r\n"));
  for (const std::string& line : Lines(head)) EXPECT_LE(line.size(), 78u) << line;
  std::string to = ParseMessage(msg).headers["to"];
  EXPECT_NE(to.find("user9@example.com"), std::string::npos);
}

}  // namespace
}  // namespace rota::notify
