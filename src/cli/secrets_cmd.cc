// rota secrets; rota secret create|rm (docs/design-secrets.md). Values go to the
// server once, in the request body; nothing prints them back.

#include <iostream>

#include "cli/commands.h"
#include "cli/format.h"
#include "common/time_util.h"
#include "common/file_util.h"
#include "common/strings.h"
#include "jobs/secret_ref.h"
#include "net/url.h"

namespace rota::cli {
namespace {

std::string OwnerOf(const api::Json& s) {
  const std::string group = s.value("group", "");
  return group.empty() ? s.value("owner", "") : "group " + group;
}

std::string MsTime(const api::Json& v) {
  if (!v.is_number_integer()) return "never";
  return FormatRfc3339(v.get<int64_t>());
}

}  // namespace

int RunSecrets(const ClientOptions& options, const OutputOptions& out, const SecretEdit& e) {
  if (!ValidOutput(out)) return 2;
  std::string value;
  if (e.action == "create") {
    if (Status st = jobs::ValidateSecretName(e.name); !st.ok()) return Usage(st.message());
    if (e.from_file_given == e.from_literal_given) return Usage("give exactly one of --from-file F and --from-literal V");
    if (e.from_file_given) {
      auto text = ReadFile(e.from_file, jobs::kMaxSecretBytes + 1);
      if (!text.ok()) {
        return Fail(text.status().code() == StatusCode::kInvalidArgument
                        ? Status::InvalidArgument(e.from_file + " is larger than " +
                                                  std::to_string(jobs::kMaxSecretBytes) + " bytes")
                        : text.status().WithContext(e.from_file));
      }
      value = std::move(*text);
    } else {
      value = e.from_literal;
    }
    if (value.empty()) return Usage("the secret's value is empty");
    if (value.size() > jobs::kMaxSecretBytes) {
      return Fail(Status::InvalidArgument("the value is " + std::to_string(value.size()) + " bytes, more than the " +
                                          std::to_string(jobs::kMaxSecretBytes) + " allowed"));
    }
  }
  auto client = ApiClient::Create(options);
  if (!client.ok()) return Fail(client.status());

  if (e.action == "create") {
    api::Json body{{"name", e.name}, {"value_hex", HexEncode(value)}};
    std::fill(value.begin(), value.end(), '\0');
    if (!e.group.empty()) body["group"] = e.group;
    auto made = client->Post("/api/v1/secrets", body);
    if (!made.ok()) return Fail(made.status());
    if (out.format == "json") {
      std::cout << made->dump(2) << "\n";
    } else {
      std::cout << "secret " << e.name << " created (" << (*made)["size"].get<int64_t>() << " bytes, owned by "
                << OwnerOf(*made) << "); use it with rota run --secret " << e.name << "[:ENV_VAR]\n";
    }
    return 0;
  }
  if (e.action == "rm") {
    auto gone = client->Delete("/api/v1/secrets/" + net::PercentEncode(e.name));
    if (!gone.ok()) return Fail(gone.status());
    if (out.format != "json") std::cout << "secret " << e.name << " removed\n";
    return 0;
  }
  auto body = client->Get("/api/v1/secrets");
  if (!body.ok()) return Fail(body.status());
  if (out.format == "json") {
    std::cout << (*body)["secrets"].dump(2) << "\n";
    return 0;
  }
  Table t({"NAME", "OWNER", "SIZE", "CREATED", "LAST USED", "CREATED BY"});
  for (const auto& s : (*body)["secrets"]) {
    t.Add({s.value("name", ""), OwnerOf(s), std::to_string(s.value("size", 0)), MsTime(s["created_ms"]),
           MsTime(s["last_used_ms"]), s.value("created_by", "")});
  }
  std::cout << t.Render();
  return 0;
}

}  // namespace rota::cli
