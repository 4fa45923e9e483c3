// npc's thread pool (Note [thread pool] in src/core/parallel.cpp): every chunk runs once,
// nested and concurrent loops, exceptions, and many short loops in a row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel.hpp"

using npc::parallel::for_chunks;
using npc::parallel::for_ranges;

TEST_CASE("parallel: every chunk runs exactly once", "[parallel]") {
  for (int nt : {1, 2, 3, 8}) {
    for (int64_t chunks : {0, 1, 2, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(chunks));
      for_chunks(nt, chunks, [&](int64_t c) { hits[static_cast<size_t>(c)].fetch_add(1); });
      for (auto& h : hits) REQUIRE(h.load() == 1);
    }
  }
}

TEST_CASE("parallel: ranges cover 0 to n once, in contiguous pieces", "[parallel]") {
  for (int64_t n : {0, 1, 5, 63, 64, 65, 100003}) {
    for (int64_t chunks : {1, 3, 8, 64, 200000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int64_t> pieces{0}, empty{0};
      for_ranges(2, n, chunks, [&](int64_t lo, int64_t hi) {
        if (lo >= hi) empty.fetch_add(1);
        pieces.fetch_add(1);
        for (int64_t i = lo; i < hi; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (auto& h : hits) REQUIRE(h.load() == 1);
      REQUIRE(empty.load() == 0);
      REQUIRE(pieces.load() == (n == 0 ? 0 : std::min(n, chunks)));
    }
  }
}

TEST_CASE("parallel: a loop inside a chunk runs on that chunk's thread", "[parallel]") {
  std::atomic<int64_t> total{0};
  std::atomic<int> outside{0}, moved{0};
  for_chunks(2, 16, [&](int64_t) {
    if (!npc::parallel::in_parallel()) outside.fetch_add(1);
    const std::thread::id me = std::this_thread::get_id();
    for_chunks(2, 8, [&](int64_t c) {
      if (std::this_thread::get_id() != me) moved.fetch_add(1);
      total.fetch_add(c);
    });
  });
  REQUIRE(outside.load() == 0);
  REQUIRE(moved.load() == 0);
  REQUIRE(total.load() == 16 * 28);
  REQUIRE_FALSE(npc::parallel::in_parallel());
}

TEST_CASE("parallel: an exception is rethrown after every chunk ran", "[parallel]") {
  std::atomic<int> ran{0};
  REQUIRE_THROWS_AS(for_chunks(2, 50, [&](int64_t c) {
                      ran.fetch_add(1);
                      if (c == 3) throw std::runtime_error("chunk 3");
                    }),
                    std::runtime_error);
  REQUIRE(ran.load() == 50);
  // The pool is usable afterwards.
  std::atomic<int> again{0};
  for_chunks(2, 10, [&](int64_t) { again.fetch_add(1); });
  REQUIRE(again.load() == 10);
}

TEST_CASE("parallel: loops from several threads at once", "[parallel]") {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 300; ++rep) {
        const int64_t chunks = 1 + (rep + t) % 40;
        std::vector<int64_t> out(static_cast<size_t>(chunks), -1);
        for_chunks(2, chunks, [&](int64_t c) { out[static_cast<size_t>(c)] = c * t; });
        for (int64_t c = 0; c < chunks; ++c)
          if (out[static_cast<size_t>(c)] != c * t) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  REQUIRE(wrong.load() == 0);
}

TEST_CASE("parallel: many short loops in a row", "[parallel]") {
  std::vector<int64_t> data(4096);
  int64_t expect = 0;
  for (int rep = 0; rep < 20000; ++rep) {
    const int64_t chunks = 2 + rep % 7;
    for_chunks(3, chunks, [&](int64_t c) { data[static_cast<size_t>(c)] += c + 1; });
    expect += chunks * (chunks + 1) / 2;
  }
  int64_t got = 0;
  for (int64_t v : data) got += v;
  REQUIRE(got == expect);
}
