// rota login / logout / whoami / passwd, rota users, rota user add|set|rm, rota tokens,
// rota token create|revoke.

#include <termios.h>
#include <unistd.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/file_util.h"
#include "net/url.h"

namespace rota::cli {
namespace {

// Reads one line from stdin; with `secret` and a terminal, without echo.
Result<std::string> ReadLine(const std::string& prompt, bool secret) {
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  if (tty) std::cerr << prompt << std::flush;
  termios old{};
  const bool hide = secret && tty && ::tcgetattr(STDIN_FILENO, &old) == 0;
  if (hide) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  }
  std::string line;
  const bool got = static_cast<bool>(std::getline(std::cin, line));
  if (hide) {
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
    std::cerr << "\n";
  }
  if (!got) return Status::InvalidArgument("no input for: " + prompt);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

void PrintUsers(const api::Json& users) {
  Table t({"USERNAME", "ROLE", "NAME", "EMAIL", "UNIX", "GROUPS", "STATE"});
  for (const auto& u : users) {
    std::string groups;
    for (const auto& g : u["groups"]) groups += (groups.empty() ? "" : ",") + g.get<std::string>();
    t.Add({Str(u, "username"), Str(u, "role"), Str(u, "display_name"), Str(u, "email"),
              Str(u, "unix_user"), groups, u.value("disabled", false) ? "disabled" : "active"});
  }
  std::cout << t.Render();
}

// The signed-in user's name ("" when the server does not say).
Result<std::string> SignedInUser(ApiClient& client) {
  ASSIGN_OR_RETURN(api::Json me, client.Get("/api/v1/auth/whoami"));
  return Str(me, "username");
}

// After a change of one's own password every token is gone, the saved one too.
void ForgetOwnToken(ApiClient& client, const std::string& username) {
  Status st = SaveCliConfig(client.server_list(), "", client.tls());
  if (!st.ok()) std::cerr << "warning: cannot forget the revoked token: " << st.message() << "\n";
  std::cerr << "Every token of " << username
            << " was revoked, this CLI's too: sign in again with rota login\n";
}

}  // namespace

int RunPasswd(const ClientOptions& options, const std::string& username) {
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto me = SignedInUser(*client);
  if (!me.ok()) return Fail(me.status());
  const std::string target = username.empty() ? *me : username;
  const bool own = target == *me;
  api::Json body = api::Json::object();
  if (own) {
    auto current = ReadLine("Current password: ", true);
    if (!current.ok()) return Fail(current.status());
    body["current_password"] = *current;
  }
  auto pw = ReadLine("New password for " + target + ": ", true);
  if (!pw.ok()) return Fail(pw.status());
  if (::isatty(STDIN_FILENO) != 0) {
    auto again = ReadLine("Repeat the new password: ", true);
    if (!again.ok()) return Fail(again.status());
    if (*again != *pw) return Fail(Status::InvalidArgument("the new passwords differ"));
  }
  body["password"] = *pw;
  auto r = client->Call("PATCH", "/api/v1/users/" + net::PercentEncode(target), body.dump());
  if (!r.ok()) return Fail(r.status());
  std::cout << "changed the password of " << target << "\n";
  if (own) {
    ForgetOwnToken(*client, target);
  } else {
    std::cerr << "Every token of " << target << " was revoked.\n";
  }
  return 0;
}

int RunLogin(const ClientOptions& options, const LoginOptions& login) {
  ClientOptions anon = options;
  anon.anonymous = true;  // do not send a stale token while signing in
  auto client = ApiClient::Create(anon);
  if (!client.ok()) return Fail(client.status());
  std::string username = login.username;
  if (username.empty()) {
    auto line = ReadLine("Username: ", false);
    if (!line.ok()) return Fail(line.status());
    username = *line;
  }
  auto password = ReadLine("Password for " + username + ": ", true);
  if (!password.ok()) return Fail(password.status());
  auto session = client->Post("/api/v1/auth/login",
                              api::Json{{"username", username}, {"password", *password}});
  if (!session.ok()) return Fail(session.status());
  ClientOptions as_user = options;
  as_user.server = client->server_list();
  as_user.token = (*session)["token"].get<std::string>();
  auto user_client = ApiClient::Create(as_user);
  if (!user_client.ok()) return Fail(user_client.status());
  // A long-lived API token for the CLI; the short session ends right away.
  api::Json req{{"name", "rota login on " + Hostname()}};
  if (!login.ttl.empty()) req["ttl"] = login.ttl;
  auto token = user_client->Post("/api/v1/tokens", req);
  if (!token.ok()) return Fail(token.status());
  (void)user_client->Post("/api/v1/auth/logout", api::Json::object());
  Status st = SaveCliConfig(client->server_list(), (*token)["token"].get<std::string>(),
                            client->tls());
  if (!st.ok()) return Fail(st.WithContext("cannot save the token"));
  std::cout << "Signed in to " << client->base_url() << " as " << username << "; token saved in "
            << CliConfigPath() << "\n";
  return 0;
}

int RunLogout(const ClientOptions& options) {
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  const std::string& token = client->token();
  if (token.empty()) return Fail(Status::InvalidArgument("not signed in"));
  // "rota_<id>_<secret>": revoke by id.
  const size_t end = token.find('_', 5);
  if (token.rfind("rota_", 0) == 0 && end != std::string::npos) {
    auto r = client->Delete("/api/v1/tokens/" + net::PercentEncode(token.substr(5, end - 5)));
    if (!r.ok() && r.status().code() != StatusCode::kUnauthenticated) return Fail(r.status());
  }
  Status st = SaveCliConfig(client->server_list(), "", client->tls());
  if (!st.ok()) return Fail(st);
  std::cout << "Signed out of " << client->base_url() << "\n";
  return 0;
}

int RunWhoami(const ClientOptions& options, const OutputOptions& out) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto me = client->Get("/api/v1/auth/whoami");
  if (!me.ok()) return Fail(me.status());
  if (out.format == "json") {
    std::cout << me->dump(2) << "\n";
  } else {
    std::cout << Str(*me, "username") << " (" << Str(*me, "role") << ") on "
              << client->base_url() << "\n";
  }
  return 0;
}

int RunUsers(const ClientOptions& options, const OutputOptions& out) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  auto body = client->Get("/api/v1/users");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["users"].dump(2) << "\n";
  } else {
    PrintUsers((*body)["users"]);
  }
  return 0;
}

int RunUserEdit(const ClientOptions& options, const OutputOptions& out, const UserEdit& edit) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  const std::string path = "/api/v1/users/" + net::PercentEncode(edit.username);
  if (edit.action == "rm") {
    auto r = client->Delete(path);
    if (!r.ok()) return Fail(r.status());
    std::cout << "deleted user " << edit.username << "\n";
    return 0;
  }
  api::Json body = api::Json::object();
  if (!edit.display_name.empty()) body["display_name"] = edit.display_name;
  if (!edit.email.empty()) body["email"] = edit.email;
  if (!edit.unix_user.empty()) body["unix_user"] = edit.unix_user;
  if (!edit.role.empty()) body["role"] = edit.role;
  if (edit.disable) body["disabled"] = true;
  if (edit.enable) body["disabled"] = false;
  if (!edit.groups.empty()) body["groups"] = edit.groups;
  std::string generated;
  bool own_password = false;
  if (edit.password_stdin) {
    if (edit.action == "set") {
      // One's own password needs the current one (an admin setting another's does not).
      auto me = SignedInUser(*client);
      if (!me.ok()) return Fail(me.status());
      own_password = *me == edit.username;
    }
    if (own_password) {
      auto current = ReadLine("Current password: ", true);
      if (!current.ok()) return Fail(current.status());
      body["current_password"] = *current;
    }
    auto pw = ReadLine("New password: ", true);
    if (!pw.ok()) return Fail(pw.status());
    body["password"] = *pw;
  } else if (edit.action == "add") {
    auto pw = RandomHex(8);
    if (!pw.ok()) return Fail(pw.status());
    generated = *pw;
    body["password"] = generated;
  }
  Result<api::Json> r = Status::Internal("unset");
  if (edit.action == "add") {
    body["username"] = edit.username;
    r = client->Post("/api/v1/users", body);
  } else {
    r = client->Call("PATCH", path, body.dump());
  }
  if (!r.ok()) return Fail(r.status());
  if (out.format == "json") {
    std::cout << r->dump(2) << "\n";
  } else {
    PrintUsers(api::Json::array({*r}));
    if (!generated.empty()) std::cout << "password: " << generated << "\n";
  }
  if (own_password) ForgetOwnToken(*client, edit.username);
  return 0;
}

int RunGroups(const ClientOptions& options, const OutputOptions& out, const GroupEdit& edit) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  if (edit.action == "rm") {
    auto r = client->Delete("/api/v1/groups/" + net::PercentEncode(edit.name));
    if (!r.ok()) return Fail(r.status());
    std::cout << "deleted group " << edit.name << "\n";
    return 0;
  }
  api::Json groups;
  if (edit.action == "add") {
    api::Json body{{"name", edit.name}};
    if (!edit.description.empty()) body["description"] = edit.description;
    auto r = client->Post("/api/v1/groups", body);
    if (!r.ok()) return Fail(r.status());
    groups = api::Json::array({*r});
  } else {
    auto r = client->Get("/api/v1/groups");
    if (!r.ok()) return Fail(r.status());
    groups = (*r)["groups"];
  }
  if (out.format == "json") {
    std::cout << (edit.action == "add" ? groups[0] : groups).dump(2) << "\n";
    return 0;
  }
  Table t({"GROUP", "DESCRIPTION", "MEMBERS"});
  for (const auto& g : groups) {
    std::string members;
    for (const auto& m : g.value("members", api::Json::array())) {
      members += (members.empty() ? "" : ",") + m.get<std::string>();
    }
    t.Add({Str(g, "name"), Str(g, "description"), members});
  }
  std::cout << t.Render();
  return 0;
}

int RunTokens(const ClientOptions& options, const OutputOptions& out, const TokenEdit& edit) {
  if (!ValidOutput(out)) return 2;
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());
  if (edit.action == "revoke") {
    auto r = client->Delete("/api/v1/tokens/" + net::PercentEncode(edit.id));
    if (!r.ok()) return Fail(r.status());
    std::cout << "revoked token " << edit.id << "\n";
    return 0;
  }
  if (edit.action == "create") {
    api::Json req{{"name", edit.name.empty() ? "api token" : edit.name}};
    if (!edit.ttl.empty()) req["ttl"] = edit.ttl;
    auto r = client->Post("/api/v1/tokens", req);
    if (!r.ok()) return Fail(r.status());
    if (out.format == "json") {
      std::cout << r->dump(2) << "\n";
    } else {
      std::cout << (*r)["token"].get<std::string>() << "\n";
      std::cerr << "(shown once; id " << Str(*r, "id") << ")\n";
    }
    return 0;
  }
  auto body = client->Get("/api/v1/tokens");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["tokens"].dump(2) << "\n";
    return 0;
  }
  Table t({"ID", "KIND", "NAME", "CREATED", "EXPIRES", "LAST USED"});
  for (const auto& tok : (*body)["tokens"]) {
    t.Add({Str(tok, "id"), Str(tok, "kind"), Str(tok, "name"), Str(tok, "created_at"),
              tok["expires_at"].is_null() ? "never" : Str(tok, "expires_at"),
              tok["last_used_at"].is_null() ? "-" : Str(tok, "last_used_at")});
  }
  std::cout << t.Render();
  return 0;
}

}  // namespace rota::cli
