#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/text_format.h"

namespace orch {
namespace {

// A recursive-descent parser over the text; every error carries the current line.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Graph parse() {
    Graph graph;
    expect_word("graph");
    graph.name = name();
    expect('(');
    if (!try_consume(')')) {
      do {
        expect('%');
        int input_line = line();
        std::string input = name();
        expect(':');
        TensorType type = tensor_type();
        guarded(input_line, [&] { graph.add_input(input, type); });
      } while (try_consume(','));
      expect(')');
    }
    expect('{');
    while (true) {
      skip_space();
      if (try_word("return")) break;
      if (try_word("const"))
        constant(graph);
      else
        node(graph);
    }
    std::vector<ValueId> outputs;
    do {
      outputs.push_back(value_ref(graph));
    } while (try_consume(','));
    graph.set_outputs(std::move(outputs));
    expect('}');
    skip_space();
    check_here(pos_ == text_.size(), "unexpected text after the graph");
    return graph;
  }

 private:
  // Runs `f`, prefixing its errors with the line where the current statement starts.
  template <typename F>
  void guarded(int statement_line, F&& f) {
    try {
      f();
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("line {}", statement_line));
    }
  }

  template <typename... Args>
  void check_here(bool ok, fmt::format_string<Args...> format, Args&&... args) {
    if (!ok) fail("line {}: {}", line(), fmt::format(format, std::forward<Args>(args)...));
  }

  int line() const {
    return 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + pos_, '\n'));
  }

  void skip_space() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  bool try_consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }

  void expect(char c) {
    char got = peek();
    check_here(got == c, "expected '{}', found {}", c,
               got ? fmt::format("'{}'", got) : std::string("end of text"));
    ++pos_;
  }

  static bool bare_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }

  std::string bare_word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && bare_char(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  bool try_word(std::string_view word) {
    skip_space();
    if (text_.substr(pos_, word.size()) != word) return false;
    size_t end = pos_ + word.size();
    if (end < text_.size() && bare_char(text_[end])) return false;
    pos_ = end;
    return true;
  }

  void expect_word(std::string_view word) { check_here(try_word(word), "expected '{}'", word); }

  std::string quoted_string() {
    expect('"');
    std::string out;
    while (true) {
      check_here(pos_ < text_.size(), "unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        check_here(pos_ < text_.size(), "unterminated string");
        char e = text_[pos_++];
        out += e == 'n' ? '\n' : e;
      } else {
        out += c;
      }
    }
  }

  std::string name() {
    if (peek() == '"') return quoted_string();
    std::string word = bare_word();
    check_here(!word.empty(), "expected a name");
    return word;
  }

  ValueId value_ref(const Graph& graph) {
    expect('%');
    std::string n = name();
    ValueId v = graph.find_value(n);
    check_here(v != kNoValue, "unknown value '%{}'", n);
    return v;
  }

  Shape shape() {
    expect('[');
    Shape dims;
    if (try_consume(']')) return dims;
    do {
      dims.push_back(integer());
    } while (try_consume(','));
    expect(']');
    return dims;
  }

  TensorType tensor_type() {
    std::string word = bare_word();
    auto dtype = parse_dtype(word);
    check_here(dtype.has_value(), "unknown element type '{}'", word);
    return TensorType{*dtype, shape()};
  }

  // A number token: digits, sign, '.', exponent, or the words nan / inf.
  std::string number_token() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '-' || text_[pos_] == '+' || text_[pos_] == '.'))
      ++pos_;
    std::string token(text_.substr(start, pos_ - start));
    check_here(!token.empty(), "expected a number");
    return token;
  }

  static bool looks_float(const std::string& token) {
    return token.find_first_of(".eEni") != std::string::npos;
  }

  int64_t integer() {
    std::string token = number_token();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
    check_here(ec == std::errc() && end == token.data() + token.size(), "bad integer '{}'", token);
    return v;
  }

  double real(const std::string& token) {
    char* end = nullptr;
    double v = std::strtod(token.c_str(), &end);
    check_here(end == token.c_str() + token.size(), "bad number '{}'", token);
    return v;
  }

  float real32(const std::string& token) {
    char* end = nullptr;
    float v = std::strtof(token.c_str(), &end);
    check_here(end == token.c_str() + token.size(), "bad number '{}'", token);
    return v;
  }

  Tensor tensor_literal(TensorType type) {
    expect('{');
    // Each value takes at least one character: check before allocating, so that a shape of
    // 10^12 elements fails here instead of asking for terabytes.
    int64_t numel = 0;
    guarded(line(), [&] { numel = num_elements(type.shape); });
    check_here(numel <= static_cast<int64_t>(text_.size() - pos_),
               "{} needs {} values but the text has only {} characters left", format_type(type),
               numel, text_.size() - pos_);
    Tensor t(type.dtype, type.shape);
    int64_t count = 0;
    if (!try_consume('}')) {
      do {
        std::string token = number_token();
        check_here(count < t.numel(), "more than {} values for {}", t.numel(), format_type(type));
        if (type.dtype == DType::f32 || type.dtype == DType::f16 || type.dtype == DType::bf16) {
          t.set(count, real32(token));
        } else if (type.dtype == DType::f64) {
          t.set(count, real(token));
        } else if (type.dtype == DType::u64) {
          uint64_t v = 0;
          auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), v);
          check_here(ec == std::errc() && end == token.data() + token.size(), "bad integer '{}'",
                     token);
          t.set_int(count, static_cast<int64_t>(v));
        } else {
          std::string_view sv = token;
          int64_t v = 0;
          auto [end, ec] = std::from_chars(sv.data(), sv.data() + sv.size(), v);
          check_here(ec == std::errc() && end == sv.data() + sv.size(), "bad integer '{}'", token);
          t.set_int(count, v);
        }
        ++count;
      } while (try_consume(','));
      expect('}');
    }
    check_here(count == t.numel(), "{} values for {}", count, format_type(type));
    return t;
  }

  AttrValue list_value() {
    expect('[');
    char c = peek();
    if (c == '"') {
      std::vector<std::string> items;
      do {
        items.push_back(quoted_string());
      } while (try_consume(','));
      expect(']');
      return items;
    }
    std::vector<std::string> tokens;
    bool any_float = false;
    do {
      tokens.push_back(number_token());
      any_float = any_float || looks_float(tokens.back());
    } while (try_consume(','));
    expect(']');
    if (any_float) {
      std::vector<float> items;
      for (const auto& t : tokens) items.push_back(real32(t));
      return items;
    }
    std::vector<int64_t> items;
    for (const auto& t : tokens) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      check_here(ec == std::errc() && end == t.data() + t.size(), "bad integer '{}'", t);
      items.push_back(v);
    }
    return items;
  }

  AttrValue attr_value() {
    char c = peek();
    if (c == '"') return quoted_string();
    if (c == '[') return list_value();
    if (try_word("ints")) return (expect('['), expect(']'), std::vector<int64_t>{});
    if (try_word("floats")) return (expect('['), expect(']'), std::vector<float>{});
    if (try_word("strings")) return (expect('['), expect(']'), std::vector<std::string>{});
    if (std::isalpha(static_cast<unsigned char>(c)) && c != 'n' && c != 'i') {
      TensorType type = tensor_type();
      return tensor_literal(type);
    }
    size_t save = pos_;
    std::string token = number_token();
    // A dtype word such as "i64" starts with 'i': retry as a tensor literal.
    if (parse_dtype(token)) {
      pos_ = save;
      TensorType type = tensor_type();
      return tensor_literal(type);
    }
    if (looks_float(token)) return real32(token);
    pos_ = save;
    return integer();
  }

  void constant(Graph& graph) {
    expect('%');
    int statement_line = line();
    std::string n = name();
    expect('=');
    TensorType type = tensor_type();
    Tensor data;
    try {
      data = tensor_literal(type);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("constant '%{}'", n));
    }
    guarded(statement_line, [&] { graph.add_constant(n, std::move(data)); });
  }

  void node(Graph& graph) {
    int statement_line = line();
    std::vector<std::string> names;
    std::vector<TensorType> types;
    do {
      expect('%');
      names.push_back(name());
      expect(':');
      types.push_back(tensor_type());
    } while (try_consume(','));
    expect('=');
    std::string op = name();
    expect('(');
    std::vector<ValueId> inputs;
    if (!try_consume(')')) {
      do {
        if (peek() == '_' && !bare_char(pos_ + 1 < text_.size() ? text_[pos_ + 1] : ' ')) {
          ++pos_;
          inputs.push_back(kNoValue);
        } else {
          inputs.push_back(value_ref(graph));
        }
      } while (try_consume(','));
      expect(')');
    }
    Attributes attrs;
    if (try_consume('{')) {
      do {
        std::string key = name();
        expect('=');
        check_here(!attrs.contains(key), "attribute '{}' is repeated", key);
        try {
          attrs.emplace(key, attr_value());
        } catch (const Error& e) {
          rethrow_with_context(e, fmt::format("attribute '{}'", key));
        }
      } while (try_consume(','));
      expect('}');
    }
    std::string node_name;
    if (try_consume('@')) node_name = name();
    guarded(statement_line, [&] {
      auto inferred = infer_node(graph, op, inputs, attrs, static_cast<int>(names.size()),
                                 node_name.empty() ? op : fmt::format("{} '{}'", op, node_name));
      for (size_t i = 0; i < types.size(); ++i)
        check(inferred[i] == types[i], "'%{}' is written {} but {} gives {}", names[i],
              format_type(types[i]), op, format_type(inferred[i]));
      graph.add_node(op, std::move(inputs), std::move(attrs), std::move(names), std::move(types),
                     node_name);
    });
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  return Parser(text).parse();
}

}  // namespace orch
