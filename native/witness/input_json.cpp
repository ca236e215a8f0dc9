// Circuit inputs from JSON text (input_json.hpp): a strict JSON.parse grammar, then JavaScript's
// BigInt() of every leaf, reduced with the circuit's field (circom/fr.hpp: cuzk's field code).
#include "input_json.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>

#include "circom/circom.hpp"
#include "circom/fr.hpp"

namespace cuzk::witness {
namespace {

// A leaf of an input's value, kept as its span of the text until the whole text has parsed (as
// JSON.parse reads it all before circom_runtime looks at a value).
struct Leaf {
  enum Kind { kNumber, kString, kTrue, kFalse, kNull, kObject } kind;
  const char* at;  // the token (a string: its contents between the quotes)
  size_t length;
};

struct Member {
  std::u16string name;
  uint64_t hash = 0;         // fnv1a64(name)
  std::vector<Leaf> leaves;  // at most the signal's size + 1: enough to tell a wrong count
  size_t count = 0;          // the leaves the value has
  size_t cap = 0;
};

// The name as UTF-8, for messages (lone surrogates as U+FFFD).
std::string utf8(const std::u16string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    uint32_t c = s[i];
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.size() && s[i + 1] >= 0xdc00 && s[i + 1] < 0xe000) {
      c = 0x10000 + ((c - 0xd800) << 10) + (s[++i] - 0xdc00);
    } else if (c >= 0xd800 && c < 0xe000) {
      c = 0xfffd;
    }
    if (c < 0x80) {
      out += (char)c;
    } else if (c < 0x800) {
      out += (char)(0xc0 | c >> 6);
      out += (char)(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += (char)(0xe0 | c >> 12);
      out += (char)(0x80 | (c >> 6 & 0x3f));
      out += (char)(0x80 | (c & 0x3f));
    } else {
      out += (char)(0xf0 | c >> 18);
      out += (char)(0x80 | (c >> 12 & 0x3f));
      out += (char)(0x80 | (c >> 6 & 0x3f));
      out += (char)(0x80 | (c & 0x3f));
    }
  }
  return out;
}

class Parser {
 public:
  Parser(const char* text, size_t length) : begin_(text), at_(text), end_(text + length) {}

  // The whole text: one value, nothing after it but whitespace. Members of a top-level object go
  // to `members` (each capped by `cap_of`); any other top-level value sets *not_object.
  template <class CapOf>
  void document(std::vector<Member>& members, CapOf cap_of, bool* not_object) {
    space();
    if (peek() == '{') {
      *not_object = false;
      top_object(members, cap_of);
    } else {
      *not_object = true;
      skip_value(0);
    }
    space();
    if (at_ != end_) fail("unexpected text after the JSON value");
  }

  // Decodes a string token's contents (escapes checked when it was parsed) into UTF-16 units.
  static std::u16string decode(const char* at, size_t length) {
    std::u16string out;
    const char* p = at;
    const char* end = at + length;
    while (p < end) {
      const unsigned char c = (unsigned char)*p;
      if (c == '\\') {
        const char e = p[1];
        p += 2;
        switch (e) {
          case 'b': out += u'\b'; break;
          case 'f': out += u'\f'; break;
          case 'n': out += u'\n'; break;
          case 'r': out += u'\r'; break;
          case 't': out += u'\t'; break;
          case 'u': {
            unsigned v = 0;
            for (int k = 0; k < 4; k++) v = v * 16 + hex_digit(p[k]);
            out += (char16_t)v;
            p += 4;
            break;
          }
          default: out += (char16_t)e;  // " \ /
        }
        continue;
      }
      p = utf8_unit(p, end, out);
    }
    return out;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    size_t line = 1, column = 1;
    for (const char* p = begin_; p < at_ && p < end_; p++) {
      if (*p == '\n') {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
    char text[160];
    std::snprintf(text, sizeof text, "the input is not valid JSON: %s at line %zu, column %zu", what, line, column);
    throw InputError{text};
  }

  int peek() const { return at_ < end_ ? (unsigned char)*at_ : -1; }

  void space() {
    while (at_ < end_ && (*at_ == ' ' || *at_ == '\t' || *at_ == '\n' || *at_ == '\r')) at_++;
  }

  void expect(char c, const char* what) {
    if (peek() != c) fail(what);
    at_++;
  }

  void literal(const char* word) {
    const size_t n = std::strlen(word);
    if ((size_t)(end_ - at_) < n || std::memcmp(at_, word, n) != 0) fail("unexpected token");
    at_ += n;
  }

  static unsigned hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
  }

  // One character of UTF-8 as UTF-16 units; an ill-formed sequence as U+FFFD (as a UTF-8 decoder
  // replaces it before JSON.parse sees the text).
  static const char* utf8_unit(const char* p, const char* end, std::u16string& out) {
    const unsigned char c = (unsigned char)*p;
    if (c < 0x80) {
      out += (char16_t)c;
      return p + 1;
    }
    int n = c >= 0xf0 && c < 0xf5 ? 3 : c >= 0xe0 ? (c < 0xf0 ? 2 : -1) : c >= 0xc2 ? 1 : -1;
    if (n < 0) {
      out += u'\xfffd';
      return p + 1;
    }
    uint32_t v = c & (0x3f >> n);
    const char* q = p + 1;
    for (int k = 0; k < n; k++, q++) {
      const unsigned char d = q < end ? (unsigned char)*q : 0;
      // the second byte's range rules out overlong forms, surrogates and values past U+10FFFF
      const unsigned lo = k > 0 ? 0x80 : c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
      const unsigned hi = k > 0 ? 0xbf : c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
      if (d < lo || d > hi) {
        out += u'\xfffd';
        return q;
      }
      v = v << 6 | (d & 0x3f);
    }
    if (v >= 0x10000) {
      out += (char16_t)(0xd800 + ((v - 0x10000) >> 10));
      out += (char16_t)(0xdc00 + ((v - 0x10000) & 0x3ff));
    } else {
      out += (char16_t)v;
    }
    return q;
  }

  // A string token (at its opening quote): checked, its contents' span returned.
  Leaf string_token() {
    expect('"', "expected a string");
    const char* start = at_;
    for (;;) {
      if (at_ >= end_) fail("unterminated string");
      const unsigned char c = (unsigned char)*at_;
      if (c == '"') break;
      if (c < 0x20) fail("a control character inside a string");
      if (c == '\\') {
        if (end_ - at_ < 2) fail("unterminated string");
        const char e = at_[1];
        if (e == 'u') {
          if (end_ - at_ < 6) fail("a short \\u escape");
          for (int k = 0; k < 4; k++)
            if (hex_digit(at_[2 + k]) > 15) fail("a bad \\u escape");
          at_ += 6;
          continue;
        }
        if (!std::strchr("\"\\/bfnrt", e) || e == 0) fail("a bad escape");
        at_ += 2;
        continue;
      }
      at_++;
    }
    Leaf leaf{Leaf::kString, start, (size_t)(at_ - start)};
    at_++;
    return leaf;
  }

  Leaf number_token() {
    const char* start = at_;
    if (peek() == '-') at_++;
    if (peek() == '0') {
      at_++;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') at_++;
    } else {
      fail("unexpected token");
    }
    if (peek() == '.') {
      at_++;
      if (!(peek() >= '0' && peek() <= '9')) fail("a number without digits after its point");
      while (peek() >= '0' && peek() <= '9') at_++;
    }
    if (peek() == 'e' || peek() == 'E') {
      at_++;
      if (peek() == '+' || peek() == '-') at_++;
      if (!(peek() >= '0' && peek() <= '9')) fail("a number without digits in its exponent");
      while (peek() >= '0' && peek() <= '9') at_++;
    }
    return Leaf{Leaf::kNumber, start, (size_t)(at_ - start)};
  }

  // A value that is not an array, as a leaf (an object is checked and skipped: it is no integer).
  Leaf scalar(size_t depth) {
    const char* start = at_;
    switch (peek()) {
      case '"': return string_token();
      case 't': literal("true"); return Leaf{Leaf::kTrue, start, 4};
      case 'f': literal("false"); return Leaf{Leaf::kFalse, start, 5};
      case 'n': literal("null"); return Leaf{Leaf::kNull, start, 4};
      case '{': skip_value(depth); return Leaf{Leaf::kObject, start, (size_t)(at_ - start)};
      default: return number_token();
    }
  }

  void deeper(size_t depth) {
    if (depth >= kMaxInputDepth) fail("values nested too deep");
  }

  // A bracketed, comma-separated list, at its opening bracket: item() parses each element.
  template <class Item>
  void list(char close, const char* what, Item item) {
    at_++;
    space();
    if (peek() == close) {
      at_++;
      return;
    }
    for (;;) {
      item();
      space();
      if (peek() != ',') break;
      at_++;
      space();
    }
    expect(close, what);
  }

  // An object, at its `{`: value(key) parses each member's value after its key and colon.
  template <class Value>
  void object(Value value) {
    list('}', "expected , or } in an object", [&] {
      const Leaf key = string_token();
      space();
      expect(':', "expected : after a key");
      value(key);
    });
  }

  // Any value, checked and dropped.
  void skip_value(size_t depth) {
    deeper(depth);
    space();
    if (peek() == '[') return list(']', "expected , or ] in an array", [&] { skip_value(depth + 1); });
    if (peek() == '{') return object([&](const Leaf&) { skip_value(depth + 1); });
    scalar(depth);
  }

  // A member's value, flattened into m (nested arrays in order).
  void flatten(Member& m, size_t depth) {
    deeper(depth);
    space();
    if (peek() == '[') return list(']', "expected , or ] in an array", [&] { flatten(m, depth + 1); });
    const Leaf leaf = scalar(depth);
    if (m.count++ < m.cap) m.leaves.push_back(leaf);
  }

  template <class CapOf>
  void top_object(std::vector<Member>& members, CapOf cap_of) {
    std::unordered_map<std::u16string, size_t> index;
    object([&](const Leaf& key) {
      std::u16string name = decode(key.at, key.length);
      auto [found, fresh] = index.emplace(name, members.size());
      if (fresh) {
        const uint64_t hash = fnv1a64(name);
        members.push_back(Member{std::move(name), hash, {}, 0, 0});
      }
      Member& m = members[found->second];
      m.leaves.clear();  // a repeated key: its last value counts, in its first place
      m.count = 0;
      m.cap = cap_of(m.hash);
      flatten(m, 1);
    });
  }

  const char* begin_;
  const char* at_;
  const char* end_;
};

FrElement small(uint64_t v) {
  FrElement e;
  e.shortVal = 0;
  e.type = Fr_LONG;
  e.longVal[0] = v;
  e.longVal[1] = e.longVal[2] = e.longVal[3] = 0;
  return e;
}

bool js_space(char16_t c) {
  switch (c) {
    case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0xa0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000: case 0xfeff:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200a;
  }
}

// digits (all below radix, at least one) as a field element: up to 60 bits at a time.
bool digits_value(const std::u16string& s, size_t from, size_t to, unsigned radix, FrElement& out) {
  if (from >= to) return false;
  FrElement acc = small(0);
  uint64_t chunk = 0, scale = 1;
  for (size_t i = from; i < to; i++) {
    const char16_t c = s[i];
    const unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
    if (d >= radix) return false;
    chunk = chunk * radix + d;
    scale *= radix;
    if (scale > (1ULL << 56) || i + 1 == to) {
      FrElement product, scaleE = small(scale), chunkE = small(chunk);
      Fr_mul(&product, &acc, &scaleE);
      Fr_add(&acc, &product, &chunkE);
      chunk = 0;
      scale = 1;
    }
  }
  out = acc;
  return true;
}

// JavaScript's StringToBigInt: false where BigInt() would throw a SyntaxError.
bool string_value(const std::u16string& raw, FrElement& out) {
  size_t from = 0, to = raw.size();
  while (from < to && js_space(raw[from])) from++;
  while (to > from && js_space(raw[to - 1])) to--;
  if (from == to) {
    out = small(0);
    return true;
  }
  if (to - from >= 2 && raw[from] == '0') {
    const char16_t p = raw[from + 1];
    const unsigned radix = p == 'x' || p == 'X' ? 16 : p == 'o' || p == 'O' ? 8 : p == 'b' || p == 'B' ? 2 : 0;
    if (radix) return digits_value(raw, from + 2, to, radix, out);
  }
  bool negative = false;
  if (raw[from] == '+' || raw[from] == '-') negative = raw[from++] == '-';
  FrElement magnitude;
  if (!digits_value(raw, from, to, 10, magnitude)) return false;
  if (negative) {
    Fr_neg(&out, &magnitude);
  } else {
    out = magnitude;
  }
  return true;
}

// BigInt(x) of a double: false unless x is a finite integer.
bool double_value(double x, FrElement& out) {
  if (!std::isfinite(x) || x != std::trunc(x)) return false;
  const double magnitude = std::fabs(x);
  FrElement acc;
  if (magnitude < 0x1p63) {
    acc = small((uint64_t)magnitude);
  } else {
    int exponent;
    const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
    acc = small((uint64_t)std::ldexp(fraction, 53));
    for (int i = 53; i < exponent; i++) {
      FrElement doubled;
      Fr_add(&doubled, &acc, &acc);
      acc = doubled;
    }
  }
  if (x < 0) {
    FrElement negated;
    Fr_neg(&negated, &acc);
    acc = negated;
  }
  out = acc;
  return true;
}

[[noreturn]] void not_an_integer(const std::u16string& name, const Leaf& leaf) {
  std::string shown;
  switch (leaf.kind) {
    case Leaf::kString: shown = "\"" + utf8(Parser::decode(leaf.at, leaf.length)) + "\""; break;
    case Leaf::kObject: shown = "an object"; break;
    default: shown.assign(leaf.at, leaf.length);
  }
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw InputError{"input signal " + utf8(name) + ": " + shown + " is not an integer"};
}

void leaf_value(const std::u16string& name, const Leaf& leaf, uint8_t* out) {
  FrElement v;
  bool ok = false;
  switch (leaf.kind) {
    case Leaf::kTrue: v = small(1); ok = true; break;
    case Leaf::kFalse: v = small(0); ok = true; break;
    case Leaf::kString: ok = string_value(Parser::decode(leaf.at, leaf.length), v); break;
    case Leaf::kNumber: ok = double_value(std::strtod(std::string(leaf.at, leaf.length).c_str(), nullptr), v); break;
    default: break;  // null, an object: BigInt() throws
  }
  if (!ok) not_an_integer(name, leaf);
  store_standard(&v, out);
}

}  // namespace

uint64_t fnv1a64(const std::u16string& name) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char16_t unit : name) {
    hash ^= unit;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

EncodedInputs parse_input_json(const char* text, size_t length, const std::unordered_map<uint64_t, uint64_t>& sizes, uint64_t total) {
  std::vector<Member> members;
  bool not_object = false;
  Parser(text, length).document(
      members,
      [&](uint64_t hash) -> size_t {
        const auto found = sizes.find(hash);
        return found == sizes.end() ? 0 : (size_t)found->second + 1;
      },
      &not_object);
  if (not_object) throw InputError{"circuit inputs must be an object of signal name -> value(s)"};
  EncodedInputs encoded;
  for (const Member& m : members) {
    const auto found = sizes.find(m.hash);
    if (found == sizes.end()) throw InputError{"input signal " + utf8(m.name) + " is not an input of the circuit"};
    if (m.count != found->second) {
      throw InputError{"input signal " + utf8(m.name) + " takes " + std::to_string(found->second) + " value(s); " + std::to_string(m.count) +
                       " given"};
    }
    encoded.hashes.push_back(m.hash);
    const size_t at = encoded.values.size();
    encoded.values.resize(at + 32 * m.leaves.size());
    for (size_t i = 0; i < m.leaves.size(); i++) leaf_value(m.name, m.leaves[i], encoded.values.data() + at + 32 * i);
    encoded.value_count += m.leaves.size();
  }
  if (encoded.value_count != total) {
    throw InputError{"not all inputs have been set: " + std::to_string(encoded.value_count) + " of " + std::to_string(total) + " values given"};
  }
  return encoded;
}

}  // namespace cuzk::witness
