// PickStandbys: which nodes a coordinator names to watch its term closely (rollout_coordination.h).
#include "agent/rollout/coordinator/rollout_coordination.h"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

namespace nodehook {
namespace {

BoardView BoardOf(int nodes) {
  BoardView board;
  for (int i = 0; i < nodes; ++i) board.nodes["node-" + std::to_string(i)] = {};
  return board;
}

std::set<std::string> Split(const std::string& text) {
  std::set<std::string> out;
  std::stringstream in(text);
  for (std::string node; std::getline(in, node, ',');) out.insert(node);
  return out;
}

TEST_CASE("a coordinator names up to three other nodes of its board as standbys") {
  CHECK(PickStandbys(BoardOf(0), "rid", "node-0_uid", kStandbys).empty());
  CHECK(PickStandbys(BoardOf(1), "rid", "node-0_uid", kStandbys).empty());  // only itself
  CHECK(Split(PickStandbys(BoardOf(3), "rid", "node-0_uid", kStandbys)) == std::set<std::string>{"node-1", "node-2"});

  const std::string picked = PickStandbys(BoardOf(50), "rid", "node-7_uid", kStandbys);
  const std::set<std::string> names = Split(picked);
  CHECK(names.size() == 3);
  CHECK(names.count("node-7") == 0);
  CHECK(PickStandbys(BoardOf(50), "rid", "node-7_uid", kStandbys) == picked);  // the same board, the same pick
}

TEST_CASE("the standbys change only when one of them leaves, and differ between rollouts") {
  BoardView board = BoardOf(50);
  const std::set<std::string> before = Split(PickStandbys(board, "rid", "node-7_uid", kStandbys));
  // A node that is not a standby leaves: nothing moves.
  for (int i = 0; i < 50; ++i) {
    const std::string node = "node-" + std::to_string(i);
    if (before.count(node) == 0 && node != "node-7") {
      board.nodes.erase(node);
      break;
    }
  }
  CHECK(Split(PickStandbys(board, "rid", "node-7_uid", kStandbys)) == before);
  // A standby leaves: the other two stay, and one more is named.
  board.nodes.erase(*before.begin());
  const std::set<std::string> after = Split(PickStandbys(board, "rid", "node-7_uid", kStandbys));
  CHECK(after.size() == 3);
  int kept = 0;
  for (const auto& node : before) kept += static_cast<int>(after.count(node));
  CHECK(kept == 2);
  // Another rollout spreads its standbys elsewhere (the hash includes its id).
  CHECK(PickStandbys(BoardOf(50), "other", "node-7_uid", kStandbys) !=
        PickStandbys(BoardOf(50), "rid", "node-7_uid", kStandbys));
}

}  // namespace
}  // namespace nodehook
