#pragma once
// Store URLs: which backend holds the store, and where.
//   sqlite:PATH                 the SQLite database file PATH (the data dir's
//                               rota.db by default); PATH's directory is the
//                               store's directory (made private, rota.lock)
//   postgresql://... postgres://...
//                               a libpq URL, passed to libpq as given, e.g.
//                               postgresql://rota@db1,db2/rota?target_session_attrs=read-write
// Parsed and checked in one place (ParseStoreUrl); messages and logs use
// `display`, which never holds a password.

#include <string>

#include "common/status.h"
#include "server/store/sql.h"

namespace rota::store {

struct StoreUrl {
  Dialect dialect = Dialect::kSqlite;
  std::string sqlite_path;  // kSqlite: the database file
  std::string pg_url;       // kPostgres: as given (may hold a password: never print it)
  std::string display;      // the URL without password, for messages
  std::string hosts;        // kPostgres: the hosts it names ("db1,db2:5433"; "" for the default)
};

// InvalidArgument, with a message naming the URL (password hidden) and what is
// wrong: an unknown scheme, an empty path, a URL libpq cannot parse.
Result<StoreUrl> ParseStoreUrl(const std::string& url);

// `url` with any password replaced by "***" (user:password@ and password=).
std::string RedactStoreUrl(const std::string& url);
// `text` (a message from libpq) with every copy of `url` in it redacted.
std::string HideUrlIn(std::string text, const std::string& url);

}  // namespace rota::store
