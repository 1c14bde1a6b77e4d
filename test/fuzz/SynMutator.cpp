//===- SynMutator.cpp - Structure-aware mutation of .syn inputs -----------===//
#include "SynMutator.h"

#include <cctype>
#include <random>
#include <vector>

namespace {

struct Token {
  std::string space; // whitespace and comments before it
  std::string text;
  /// The index of the matching bracket (for an opening or closing one).
  int match = -1;
};

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Tokens of `in`; brackets matched (an unmatched one matches nothing).
std::vector<Token> tokenize(const std::string &in) {
  std::vector<Token> tokens;
  std::string space;
  size_t i = 0, n = in.size();
  while (i < n) {
    char c = in[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      space += c;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && in[i + 1] == '/') {
      size_t end = in.find('\n', i);
      end = end == std::string::npos ? n : end;
      space += in.substr(i, end - i);
      i = end;
      continue;
    }
    size_t start = i;
    if (c == '"') {
      ++i;
      while (i < n && in[i] != '"')
        i += in[i] == '\\' ? 2 : 1;
      i = std::min(i + 1, n);
    } else if (isWordChar(c) || c == '.') {
      while (i < n && (isWordChar(in[i]) || in[i] == '.'))
        ++i;
    } else {
      ++i;
    }
    tokens.push_back({space, in.substr(start, i - start)});
    space.clear();
  }
  if (!space.empty())
    tokens.push_back({space, ""});
  std::vector<int> stack;
  for (int t = 0; t < int(tokens.size()); ++t) {
    const std::string &s = tokens[t].text;
    if (s == "(" || s == "[" || s == "{") {
      stack.push_back(t);
    } else if ((s == ")" || s == "]" || s == "}") && !stack.empty()) {
      char open = tokens[stack.back()].text[0];
      if ((open == '(' && s == ")") || (open == '[' && s == "]") || (open == '{' && s == "}")) {
        tokens[t].match = stack.back();
        tokens[stack.back()].match = t;
        stack.pop_back();
      }
    }
  }
  return tokens;
}

class SynMutator {
public:
  SynMutator(std::vector<Token> tokens, unsigned seed) : tokens(std::move(tokens)), rng(seed) {}

  bool mutate() {
    for (int attempt = 0; attempt < 8; ++attempt) {
      bool done = false;
      switch (below(9)) {
      case 0: done = eraseGroup(); break;
      case 1: done = duplicateGroup(); break;
      case 2: done = swapGroups(); break;
      case 3: done = moveGroup(); break;
      case 4: done = replaceWord(); break;
      case 5: done = replaceNumber(); break;
      case 6: done = eraseElement(); break;
      case 7: done = duplicateElement(); break;
      case 8: done = swapElements(); break;
      }
      if (done)
        return true;
    }
    return false;
  }

  std::string str() const {
    std::string out;
    for (const Token &t : tokens)
      out += t.space + t.text;
    return out;
  }

private:
  size_t below(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

  /// A random group: [first, last] token indices, a bracketed group or one
  /// token that is not a bracket.
  bool pickGroup(int &first, int &last) {
    if (tokens.empty())
      return false;
    for (int tries = 0; tries < 16; ++tries) {
      int t = int(below(tokens.size()));
      const std::string &s = tokens[t].text;
      if (s.empty())
        continue;
      if (s == "(" || s == "[" || s == "{") {
        if (tokens[t].match < 0)
          continue;
        first = t, last = tokens[t].match;
        return true;
      }
      if (s == ")" || s == "]" || s == "}")
        continue;
      first = last = t;
      return true;
    }
    return false;
  }

  std::vector<Token> slice(int first, int last) const {
    return std::vector<Token>(tokens.begin() + first, tokens.begin() + last + 1);
  }
  /// Replaces the token range and re-matches the brackets.
  void splice(int first, int last, const std::vector<Token> &with) {
    std::vector<Token> out(tokens.begin(), tokens.begin() + first);
    out.insert(out.end(), with.begin(), with.end());
    out.insert(out.end(), tokens.begin() + last + 1, tokens.end());
    std::string text;
    for (const Token &t : out)
      text += t.space + t.text;
    tokens = tokenize(text);
  }

  /// The comma-separated elements of a random bracketed group, as token
  /// ranges [first, last] (a layer of a stack, an argument, a field).
  std::vector<std::pair<int, int>> pickElements() {
    std::vector<int> opens;
    for (int t = 0; t < int(tokens.size()); ++t)
      if (tokens[t].match > t)
        opens.push_back(t);
    if (opens.empty())
      return {};
    int open = opens[below(opens.size())], close = tokens[open].match;
    std::vector<std::pair<int, int>> elements;
    int start = open + 1;
    for (int t = open + 1; t <= close; ++t) {
      if (t == close || tokens[t].text == ",") {
        if (t > start)
          elements.push_back({start, t - 1});
        start = t + 1;
      } else if (tokens[t].match > t) {
        t = tokens[t].match; // skip nested groups
      }
    }
    return elements;
  }
  bool eraseElement() {
    auto e = pickElements();
    if (e.size() < 2)
      return false;
    size_t i = below(e.size());
    // With the comma before it (or after it, for the first).
    int first = i ? e[i - 1].second + 1 : e[i].first;
    int last = i ? e[i].second : e[i + 1].first - 1;
    splice(first, last, {});
    return true;
  }
  bool duplicateElement() {
    auto e = pickElements();
    if (e.empty())
      return false;
    auto [first, last] = e[below(e.size())];
    std::vector<Token> copy = slice(first, last);
    std::vector<Token> with = copy;
    with.push_back({"", ","});
    if (copy.front().space.empty())
      copy.front().space = " ";
    with.insert(with.end(), copy.begin(), copy.end());
    splice(first, last, with);
    return true;
  }
  bool swapElements() {
    auto e = pickElements();
    if (e.size() < 2)
      return false;
    size_t i = below(e.size()), j = below(e.size());
    if (i == j)
      return false;
    if (i > j)
      std::swap(i, j);
    std::vector<Token> all = slice(e[j].first, e[j].second);
    std::vector<Token> middle = slice(e[i].second + 1, e[j].first - 1);
    std::vector<Token> a = slice(e[i].first, e[i].second);
    all.insert(all.end(), middle.begin(), middle.end());
    all.insert(all.end(), a.begin(), a.end());
    splice(e[i].first, e[j].second, all);
    return true;
  }

  bool eraseGroup() {
    int f, l;
    if (!pickGroup(f, l))
      return false;
    splice(f, l, {});
    return true;
  }
  bool duplicateGroup() {
    int f, l;
    if (!pickGroup(f, l))
      return false;
    std::vector<Token> twice = slice(f, l);
    std::vector<Token> again = slice(f, l);
    if (again.front().space.empty())
      again.front().space = " ";
    twice.insert(twice.end(), again.begin(), again.end());
    splice(f, l, twice);
    return true;
  }
  bool swapGroups() {
    int f1, l1, f2, l2;
    if (!pickGroup(f1, l1) || !pickGroup(f2, l2))
      return false;
    if (f2 < f1)
      std::swap(f1, f2), std::swap(l1, l2);
    // Two disjoint groups of one kind: two tokens, or two groups in the
    // same brackets.
    if (l1 >= f2 || (f1 == l1) != (f2 == l2) ||
        (f1 != l1 && tokens[f1].text != tokens[f2].text))
      return false;
    std::vector<Token> all = slice(f2, l2);
    if (l1 + 1 <= f2 - 1) {
      std::vector<Token> middle = slice(l1 + 1, f2 - 1);
      all.insert(all.end(), middle.begin(), middle.end());
    }
    std::vector<Token> a = slice(f1, l1);
    all.insert(all.end(), a.begin(), a.end());
    splice(f1, l2, all);
    return true;
  }
  bool moveGroup() {
    int f, l;
    if (!pickGroup(f, l))
      return false;
    std::vector<Token> g = slice(f, l);
    if (g.front().space.empty())
      g.front().space = " ";
    splice(f, l, {});
    if (tokens.empty())
      return false;
    int at = int(below(tokens.size()));
    splice(at, at - 1, g);
    return true;
  }
  bool replaceWord() {
    std::vector<int> words;
    for (int t = 0; t < int(tokens.size()); ++t)
      if (!tokens[t].text.empty() && std::isalpha(static_cast<unsigned char>(tokens[t].text[0])))
        words.push_back(t);
    if (words.size() < 2)
      return false;
    int a = words[below(words.size())], b = words[below(words.size())];
    if (tokens[a].text == tokens[b].text)
      return false;
    tokens[a].text = tokens[b].text;
    return true;
  }
  bool replaceNumber() {
    static const char *kNumbers[] = {"0", "1", "-1", "2", "3", "7", "255", "256", "65536",
                                     "2147483648", "99999999999999999999", "0.5", "1e-30",
                                     "1e308", "-0.0"};
    std::vector<int> numbers;
    for (int t = 0; t < int(tokens.size()); ++t)
      if (!tokens[t].text.empty() && std::isdigit(static_cast<unsigned char>(tokens[t].text[0])))
        numbers.push_back(t);
    if (numbers.empty())
      return false;
    tokens[numbers[below(numbers.size())]].text = kNumbers[below(std::size(kNumbers))];
    return true;
  }

  std::vector<Token> tokens;
  std::mt19937 rng;
};

} // namespace

std::string synpl::fuzz::mutateSyn(const std::string &in, unsigned seed) {
  std::vector<Token> tokens = tokenize(in);
  if (tokens.empty())
    return "";
  SynMutator m(std::move(tokens), seed);
  if (!m.mutate())
    return "";
  return m.str();
}
