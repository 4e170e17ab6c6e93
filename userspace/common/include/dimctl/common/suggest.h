// "Did you mean ...?": the closest known word to a misspelt one, shared by every loader of
// human-written files (the config, the simulator's workload files) so that both suggest alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dimctl {

// Damerau-Levenshtein (optimal string alignment) distance; a transposition counts as 1.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// The closest candidate within a typo's reach of `word`, if any.
inline std::optional<std::string> suggest(std::string_view word,
                                          const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  size_t best_d = SIZE_MAX;
  // Short words tolerate one edit, longer ones two: enough for typos, not for unrelated keys.
  const size_t limit = word.size() <= 4 ? 1 : 2;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    // A long shared prefix catches inflections and abbreviations ("enforcing", "busiest")
    // that are many edits away.
    size_t lcp = 0;
    while (lcp < word.size() && lcp < c.size() && word[lcp] == c[lcp]) ++lcp;
    bool prefix_like = lcp >= 4 && lcp + 1 >= std::min(word.size(), c.size());
    if ((d <= limit || prefix_like) && d < best_d) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

}  // namespace dimctl
