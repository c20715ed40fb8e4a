#include <catch2/catch.hpp>

#include "storage/sqlite_db.h"
#include "test/fakes/temp_dir.h"

namespace nodehook {
namespace {

std::unique_ptr<SqliteDb> OpenDb(const std::string& path) {
  auto db = SqliteDb::Open(path);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

TEST_CASE("a full disk is reported as unavailable, naming the operation and SQLite's message") {
  TempDir dir;
  auto db = OpenDb(dir.File("full.db"));
  REQUIRE(db->Exec("setup", "CREATE TABLE t (v TEXT NOT NULL)").ok());
  // Cap the file at a few pages so it fills up like a full disk would.
  REQUIRE(db->QueryText("setup", "PRAGMA max_page_count = 4").ok());
  auto insert = db->Prepare("Fill", "INSERT INTO t (v) VALUES (?1)");
  REQUIRE(insert.ok());
  insert->Bind(1, std::string(64 * 1024, 'x'));
  Status status = insert->Run();
  CHECK(status.code() == StatusCode::kUnavailable);
  CHECK(status.message() == "sqlite Fill: database or disk is full");
}

TEST_CASE("a transaction that is not committed is rolled back") {
  auto db = OpenDb(":memory:");
  REQUIRE(db->Exec("setup", "CREATE TABLE t (v INTEGER NOT NULL)").ok());
  {
    Transaction tx(*db, "test");
    REQUIRE(tx.Begin().ok());
    REQUIRE(db->Exec("test", "INSERT INTO t (v) VALUES (1)").ok());
  }
  CHECK(*db->QueryText("test", "SELECT count(*) FROM t") == "0");
  {
    Transaction tx(*db, "test");
    REQUIRE(tx.Begin().ok());
    REQUIRE(db->Exec("test", "INSERT INTO t (v) VALUES (1)").ok());
    REQUIRE(tx.Commit().ok());
  }
  CHECK(*db->QueryText("test", "SELECT count(*) FROM t") == "1");
}

TEST_CASE("a cached statement starts clean on every use") {
  auto db = OpenDb(":memory:");
  REQUIRE(db->Exec("setup", "CREATE TABLE t (v INTEGER NOT NULL); INSERT INTO t VALUES (1), (2)").ok());
  const std::string sql = "SELECT v FROM t WHERE v >= ?1 ORDER BY v";
  {
    auto first = db->Prepare("test", sql);
    first->Bind(1, int64_t{1});
    REQUIRE(*first->Step());  // leave the statement mid-result
    CHECK(first->Int64(0) == 1);
  }
  auto again = db->Prepare("test", sql);
  again->Bind(1, int64_t{2});
  REQUIRE(*again->Step());
  CHECK(again->Int64(0) == 2);
  CHECK_FALSE(*again->Step());
}

TEST_CASE("values bind to ?1, ?2, ... in order and columns read back by the type of each field") {
  auto db = OpenDb(":memory:");
  REQUIRE(db->Exec("setup", "CREATE TABLE t (s TEXT NOT NULL, n INTEGER NOT NULL, i INTEGER NOT NULL, "
                            "b INTEGER NOT NULL)").ok());
  REQUIRE(db->RunCached("insert", "INSERT INTO t (s, n, i, b) VALUES (?1, ?2, ?3, ?4)", "text",
                        int64_t{1'700'000'000'123}, 7, true).ok());
  auto st = db->Prepare("select", "SELECT s, n, i, b FROM t WHERE s = ?1 AND i = ?2", std::string("text"), 7);
  REQUIRE(st.ok());
  REQUIRE(*st->Step());
  std::string s;
  int64_t n = 0;
  int i = 0;
  bool b = false;
  st->Columns(0, s, n, i, b);
  CHECK(s == "text");
  CHECK(n == 1'700'000'000'123);
  CHECK(i == 7);
  CHECK(b);
}

TEST_CASE("a statement that cannot be prepared is an error of its operation, whatever is bound") {
  auto db = OpenDb(":memory:");
  Status status = db->RunCached("Broken", "INSERT INTO missing (v) VALUES (?1)", std::string("x"));
  CHECK(status.code() == StatusCode::kInternal);
  CHECK(status.message() == "sqlite Broken: no such table: missing");
  CHECK_FALSE(ReadAll(db->Prepare("Broken", "SELECT v FROM missing WHERE v = ?1", int64_t{1}),
                      +[](const Statement& row) { return row.Text(0); })
                  .ok());
}

}  // namespace
}  // namespace nodehook
