// `tilepipe align QUERY.fa DB.fa --top N`: every query record against every database record on
// threads and ranks, the N best hits of each query, as a table, JSON or the alignment formats.
#include "align_search.hpp"

#include <tilepipe/comm/world.hpp>
#include <tilepipe/kernels/sw_align.hpp>
#include <tilepipe/kernels/sw_search.hpp>
#include <tilepipe/runtime/ranks.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "command.hpp"

namespace tp::app {
namespace {

// The pairs rank `rank` of `ranks` computes: pair k (query k / targets, target k % targets) when
// k % ranks == rank. Pairs are independent, so the split changes no result.
std::vector<kernels::SwPair> pairs_of(std::size_t queries, std::size_t targets, int rank,
                                      int ranks) {
  std::vector<kernels::SwPair> out;
  for (std::size_t k = static_cast<std::size_t>(rank); k < queries * targets;
       k += static_cast<std::size_t>(ranks)) {
    out.push_back({k / targets, k % targets});
  }
  return out;
}

// A rank's results as int64 words: per pair k, score, end_query, end_target, then (alignment)
// query_start, query_end, target_start, target_end, op count and (op, length) per op, or -1.
void pack(std::vector<std::int64_t>& words, std::size_t k, const kernels::SwPairResult& r) {
  words.insert(words.end(),
               {static_cast<std::int64_t>(k), r.best.score, r.best.end_query, r.best.end_target});
  if (!r.alignment) {
    words.push_back(-1);
    return;
  }
  const auto& a = *r.alignment;
  words.insert(words.end(), {a.query_start, a.query_end, a.target_start, a.target_end,
                             static_cast<std::int64_t>(a.ops.size())});
  for (const auto& op : a.ops) words.insert(words.end(), {op.op, op.length});
}

void unpack(std::span<const std::int64_t> words, std::vector<kernels::SwPairResult>& results) {
  std::size_t i = 0;
  while (i < words.size()) {
    kernels::SwPairResult r;
    const auto k = static_cast<std::size_t>(words[i]);
    r.best = {static_cast<std::int32_t>(words[i + 1]), words[i + 2], words[i + 3]};
    i += 4;
    if (words[i] >= 0) {
      kernels::SwAlignment a;
      a.score = r.best.score;
      a.query_start = words[i];
      a.query_end = words[i + 1];
      a.target_start = words[i + 2];
      a.target_end = words[i + 3];
      const auto ops = static_cast<std::size_t>(words[i + 4]);
      i += 5;
      for (std::size_t o = 0; o < ops; ++o, i += 2) {
        a.ops.push_back({static_cast<char>(words[i]), words[i + 1]});
      }
      r.alignment = std::move(a);
    } else {
      ++i;
    }
    results[k] = std::move(r);
  }
}

kernels::SwSearchOptions search_options(const SearchRequest& q) {
  kernels::SwSearchOptions s;
  s.threads = q.cpus;
  s.tiled_cells = q.tiled_cells;
  s.traceback = !q.score_only;
  s.sw = q.sw;
  return s;
}

// Every pair's result, in pair order (query-major), computed on this process's threads or on
// ranks; empty on a rank other than the root.
Expected<std::optional<std::vector<kernels::SwPairResult>>> compute(const SearchRequest& q) {
  std::vector<std::vector<std::uint8_t>> queries, targets;
  for (const auto& s : q.queries) queries.push_back(s.codes);
  for (const auto& s : q.targets) targets.push_back(s.codes);
  const std::size_t count = queries.size() * targets.size();
  const auto search = [&](int rank, int ranks) {
    const auto pairs = pairs_of(queries.size(), targets.size(), rank, ranks);
    return kernels::sw_search(q.matrix, queries, targets, q.gaps, pairs, search_options(q));
  };
  std::vector<kernels::SwPairResult> results(count);
  if (q.nodes <= 1 && !comm::World::launched_by_mpi()) {
    auto r = search(0, 1);
    if (!r) return Unexpected{r.error()};
    return std::optional{std::move(*r)};
  }
  std::fflush(stdout);  // forked ranks must not repeat buffered output
  const int ranks = q.nodes_given || !comm::World::launched_by_mpi() ? q.nodes : 0;
  auto ran = runtime::run_ranks(
      ranks, q.comm, runtime::LaunchMode::automatic,
      [&](comm::World& world) -> Expected<std::vector<std::byte>> {
        if (ranks > 0 && world.size() != ranks) {
          return fail(Errc::invalid_argument,
                      fmt::format("--nodes {} but the MPI job has {} ranks", ranks, world.size()));
        }
        const auto pairs = pairs_of(queries.size(), targets.size(), world.rank(), world.size());
        auto r = kernels::sw_search(q.matrix, queries, targets, q.gaps, pairs, search_options(q));
        if (!r) return Unexpected{r.error()};
        std::vector<std::int64_t> words;
        for (std::size_t i = 0; i < pairs.size(); ++i) {
          pack(words, pairs[i].query * targets.size() + pairs[i].target, (*r)[i]);
        }
        auto blobs = world.gather(std::as_bytes(std::span(words)));
        if (!blobs) return Unexpected{blobs.error()};
        std::vector<std::byte> all;
        for (const auto& b : *blobs) all.insert(all.end(), b.begin(), b.end());
        return all;
      });
  if (!ran) return Unexpected{ran.error()};
  if (!ran->root) return std::optional<std::vector<kernels::SwPairResult>>{};
  std::vector<std::int64_t> words(ran->bytes.size() / sizeof(std::int64_t));
  std::memcpy(words.data(), ran->bytes.data(), words.size() * sizeof(std::int64_t));
  unpack(words, results);
  return std::optional{std::move(results)};
}

struct Hit {
  std::size_t query;
  std::size_t target;
  const kernels::SwPairResult* result;
};

// The hits shown: pairs scoring above 0, by score (descending), then database order, then query
// order; of each query its first `top` in that order (all when top is 0).
std::vector<Hit> select_hits(const SearchRequest& q,
                             const std::vector<kernels::SwPairResult>& results) {
  std::vector<Hit> hits;
  const std::size_t nt = q.targets.size();
  for (std::size_t k = 0; k < results.size(); ++k) {
    if (results[k].best.score > 0) hits.push_back({k / nt, k % nt, &results[k]});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    if (a.result->best.score != b.result->best.score) {
      return a.result->best.score > b.result->best.score;
    }
    return a.target != b.target ? a.target < b.target : a.query < b.query;
  });
  if (q.top == 0) return hits;
  std::vector<std::int64_t> kept(q.queries.size(), 0);
  std::vector<Hit> out;
  for (const Hit& h : hits) {
    if (kept[h.query]++ < q.top) out.push_back(h);
  }
  return out;
}

std::string table(const SearchRequest& q, const std::vector<Hit>& hits,
                  const std::vector<kernels::SwAlignmentStats>& stats) {
  std::vector<std::vector<std::string>> rows;
  if (q.score_only) {
    rows.push_back({"query", "target", "score", "end_query", "end_target"});
  } else {
    rows.push_back({"query", "target", "score", "query_start", "query_end", "target_start",
                    "target_end", "length", "identity", "similarity", "gaps", "cigar"});
  }
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const auto& r = *hits[h].result;
    std::vector<std::string> row = {q.queries[hits[h].query].name, q.targets[hits[h].target].name,
                                    score_text(r.best.score, q.scale)};
    if (q.score_only) {
      row.insert(row.end(), {std::to_string(r.best.end_query), std::to_string(r.best.end_target)});
    } else {
      const auto& a = *r.alignment;
      const auto& s = stats[h];
      for (const std::int64_t v : {a.query_start, a.query_end, a.target_start, a.target_end,
                                   s.length, s.identity, s.similarity, s.gaps}) {
        row.push_back(std::to_string(v));
      }
      row.push_back(kernels::cigar(a));
    }
    rows.push_back(std::move(row));
  }
  // Columns two spaces apart: names left-aligned, numbers right-aligned, the last column bare.
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      if (last && !q.score_only) {
        out += row[c];
      } else if (c < 2) {
        out += fmt::format("{:<{}}", row[c], width[c]);
      } else {
        out += fmt::format("{:>{}}", row[c], width[c]);
      }
      if (!last) out += "  ";
    }
    out += "\n";
  }
  return out;
}

std::string json(const SearchRequest& q, const std::vector<Hit>& hits,
                 const std::vector<kernels::SwAlignmentStats>& stats) {
  nlohmann::ordered_json j = json_preamble("align");
  j["queries"] = q.queries.size();
  j["targets"] = q.targets.size();
  j["top"] = q.top > 0 ? nlohmann::ordered_json(q.top) : nlohmann::ordered_json(nullptr);
  j["nodes"] = q.nodes;
  j["cpus"] = q.cpus;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const auto& r = *hits[h].result;
    const auto& qs = q.queries[hits[h].query];
    const auto& ts = q.targets[hits[h].target];
    nlohmann::ordered_json e{
        {"query_name", qs.name},
        {"target_name", ts.name},
        {"score", q.scale == 1
                      ? nlohmann::ordered_json(r.best.score)
                      : nlohmann::ordered_json(static_cast<double>(r.best.score) / q.scale)},
        {"end_query", r.best.end_query},
        {"end_target", r.best.end_target},
        {"query_length", qs.codes.size()},
        {"target_length", ts.codes.size()}};
    if (r.alignment) {
      e.update(alignment_json(*r.alignment, stats[h]));
    }
    list.push_back(std::move(e));
  }
  j["hits"] = std::move(list);
  return j.dump() + "\n";
}

}  // namespace

int emit(std::string_view text, std::optional<OutputFile>& output) {
  if (!output) {
    fmt::print("{}", text);
    return exit_ok;
  }
  if (auto w = output->write(text); !w) {
    return report_error(Error(w.error().code, "--output: " + w.error().message));
  }
  return exit_ok;
}

int run_search(const SearchRequest& q, std::optional<OutputFile>& output) {
  auto results = compute(q);
  if (!results) return report_error(results.error());
  if (!*results) return exit_ok;  // not the root
  const auto hits = select_hits(q, **results);
  std::vector<kernels::SwAlignmentStats> stats;
  for (const Hit& h : hits) {
    stats.push_back(h.result->alignment
                        ? kernels::alignment_stats(q.matrix, q.queries[h.query].codes,
                                                   q.targets[h.target].codes, *h.result->alignment)
                        : kernels::SwAlignmentStats{});
  }
  if (q.json) return emit(json(q, hits, stats), output);
  if (q.format == "text") return emit(table(q, hits, stats), output);
  std::string text;
  if (q.format == "sam") {
    std::vector<const AlignSequence*> targets;
    for (const auto& t : q.targets) targets.push_back(&t);
    text = sam_header(targets);
  }
  // SAM: a query's first hit (its best) is its primary record, the others secondary (flag 256);
  // a query without a hit is one unmapped record (flag 4), as an aligner writes a read it could
  // not place.
  std::vector<bool> mapped(q.queries.size(), false);
  for (std::size_t h = 0; h < hits.size(); ++h) {
    const bool secondary = mapped[hits[h].query];
    mapped[hits[h].query] = true;
    const AlignShown shown{q.queries[hits[h].query],
                           q.targets[hits[h].target],
                           q.matrix,
                           q.gap_open,
                           q.gap_extend,
                           q.scale,
                           *hits[h].result->alignment,
                           stats[h]};
    text += q.format == "pair"  ? format_pair(shown)
            : q.format == "sam" ? sam_record(shown, secondary)
                                : format_blast(shown);
  }
  if (q.format == "sam") {
    for (std::size_t k = 0; k < q.queries.size(); ++k) {
      if (!mapped[k]) text += sam_unmapped(q.queries[k]);
    }
  }
  return emit(text, output);
}

}  // namespace tp::app
