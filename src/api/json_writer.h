#pragma once
// JsonWriter: appends JSON text to a string without building a DOM. Used on hot
// paths (every agent sample); produces the same document as the DOM codecs.
// The caller keeps the structure valid (keys inside objects, balanced Begin/End).
// Strings are escaped as JSON requires; bytes >= 0x80 pass through unchanged, so
// REQUIRES: strings are valid UTF-8.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace rota::api {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}
  // Bytes written to the string so far (all of it, not only by this writer).
  size_t size() const { return out_->size(); }

  void BeginObject() { Sep(); out_->push_back('{'); first_ = true; }
  void EndObject() { out_->push_back('}'); first_ = false; }
  void BeginArray() { Sep(); out_->push_back('['); first_ = true; }
  void EndArray() { out_->push_back(']'); first_ = false; }
  void Key(std::string_view k) {
    Sep();
    first_ = true;  // String() must not add another comma
    String(k);
    out_->push_back(':');
    first_ = true;  // the value follows without a comma
  }
  void String(std::string_view s) {
    Sep();
    out_->push_back('"');
    for (char c : s) {
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out_->push_back('\\');
        out_->push_back(c);
      } else if (u < 0x20) {
        static const char* kHex = "0123456789abcdef";
        switch (c) {
          case '\n': *out_ += "\\n"; break;
          case '\t': *out_ += "\\t"; break;
          case '\r': *out_ += "\\r"; break;
          case '\b': *out_ += "\\b"; break;
          case '\f': *out_ += "\\f"; break;
          default:
            *out_ += "\\u00";
            out_->push_back(kHex[u >> 4]);
            out_->push_back(kHex[u & 15]);
        }
      } else {
        out_->push_back(c);
      }
    }
    out_->push_back('"');
    first_ = false;
  }
  void Bool(bool b) { Sep(); *out_ += b ? "true" : "false"; first_ = false; }
  template <typename T>
  void Int(T v) {
    Sep();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, r.ptr);
    first_ = false;
  }
  void Double(double v) {
    Sep();
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
    out_->append(buf, r.ptr);
    // Keep it a JSON number that reads back as floating point, as the DOM dump does.
    std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
    if (text.find_first_of(".eE") == std::string_view::npos) *out_ += ".0";
    first_ = false;
  }

 private:
  void Sep() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }
  std::string* out_;
  bool first_ = true;
};

}  // namespace rota::api
