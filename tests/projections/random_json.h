// RandomJson: random JSON values for the property tests of JSON text. Strings
// are built from pieces the test chooses (escapes, bytes dump() writes raw,
// multi-byte characters, JSON syntax); numbers span the whole range of
// integers and doubles from 1e-30 to 1e30; arrays and objects nest until
// `max_depth`, then only scalars are drawn.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace runledger::testing {

class RandomJson {
 public:
  // Value strings take up to `max_pieces` pieces; keys up to 3.
  RandomJson(uint32_t seed, std::vector<std::string> pieces, int max_depth, int max_pieces)
      : rng_(seed), pieces_(std::move(pieces)), max_depth_(max_depth), max_pieces_(max_pieces) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(int percent) { return pick(100) < percent; }

  std::string text(int max_pieces) {
    std::string out;
    for (int n = pick(max_pieces + 1); n > 0; --n) {
      out += pieces_[static_cast<size_t>(pick(static_cast<int>(pieces_.size())))];
    }
    return out;
  }
  std::string text() { return text(max_pieces_); }

  nlohmann::json value(int depth = 0) {
    switch (pick(depth > max_depth_ ? 6 : 8)) {
      case 0:
        return nullptr;
      case 1:
        return chance(50);
      case 2:
        return std::uniform_int_distribution<int64_t>(std::numeric_limits<int64_t>::min(),
                                                      std::numeric_limits<int64_t>::max())(rng_);
      case 3:
        return std::uniform_int_distribution<uint64_t>(0,
                                                       std::numeric_limits<uint64_t>::max())(rng_);
      case 4:
        return std::uniform_real_distribution<double>(-1, 1)(rng_) * std::pow(10.0, pick(61) - 30);
      case 5:
        return text();
      case 6: {
        nlohmann::json a = nlohmann::json::array();
        for (int n = pick(4); n > 0; --n) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        nlohmann::json o = nlohmann::json::object();
        for (int n = pick(4); n > 0; --n) o[text(3)] = value(depth + 1);
        return o;
      }
    }
  }

 private:
  std::mt19937 rng_;
  std::vector<std::string> pieces_;
  int max_depth_;
  int max_pieces_;
};

}  // namespace runledger::testing
