#include "cli/top/top_view.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/time_util.h"

namespace rota::cli::top {
namespace {

std::optional<double> Num(const api::Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> Count(const api::Json& obj, const char* key) {
  auto v = Num(obj, key);
  if (!v || *v < 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::string Text(const api::Json& obj, const char* key, const std::string& fallback = "") {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "gpu-2" before "gpu-10".
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string_view da = std::string_view(a).substr(i, i2 - i), db = std::string_view(b).substr(j, j2 - j);
      while (da.size() > 1 && da[0] == '0') da.remove_prefix(1);
      while (db.size() > 1 && db[0] == '0') db.remove_prefix(1);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = i2;
      j = j2;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::string Pad(std::string s, size_t width, bool right = false) {
  if (s.size() > width) {
    s = width == 0 ? "" : s.substr(0, width - 1) + "~";
  }
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string Pct(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", *v);
  return buf;
}

std::string Gib(uint64_t bytes) {
  char buf[32];
  double g = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  std::snprintf(buf, sizeof buf, g < 10 ? "%.1f" : "%.0f", g);
  return buf;
}

std::string Watts(double w) {
  char buf[32];
  if (w >= 10000) std::snprintf(buf, sizeof buf, "%.1fkW", w / 1000);
  else std::snprintf(buf, sizeof buf, "%.0fW", w);
  return buf;
}

// [|||||     45%]: `width` columns in all.
std::string Bar(const std::optional<double>& pct, int width) {
  const int inner = std::max(0, width - 2);
  std::string label = Pct(pct);
  std::string fill(static_cast<size_t>(inner), ' ');
  if (pct) {
    int n = static_cast<int>(std::lround(std::clamp(*pct, 0.0, 100.0) / 100.0 * inner));
    for (int i = 0; i < n; ++i) fill[static_cast<size_t>(i)] = '|';
  }
  if (static_cast<int>(label.size()) <= inner) fill.replace(fill.size() - label.size(), label.size(), label);
  return "[" + fill + "]";
}

// One character per GPU: '_' idle, then . : - = + * # % @ as utilisation rises; '?' unknown.
char GpuGlyph(const Gpu& g) {
  static constexpr char kRamp[] = "_.:-=+*#%@";
  if (!g.util_pct) return '?';
  double u = std::clamp(*g.util_pct, 0.0, 100.0);
  if (u <= 0) return kRamp[0];
  return kRamp[std::min(9, 1 + static_cast<int>((u - 0.001) / 100.0 * 9))];
}

// Cuts a plain line to `cols` columns.
std::string Fit(std::string line, int cols) {
  if (cols <= 0) return "";
  if (static_cast<int>(line.size()) > cols) line.resize(static_cast<size_t>(cols));
  return line;
}

struct ListLine {
  const Node* node;
  int gpu;  // -1: the node's own line
};

bool Matches(const Node& n, const std::string& filter) {
  if (filter.empty()) return true;
  const std::string f = Lower(filter);
  if (Lower(n.name).find(f) != std::string::npos || Lower(n.state).find(f) != std::string::npos) return true;
  for (const auto& g : n.gpus) {
    for (const auto& u : g.users) {
      if (Lower(u).find(f) != std::string::npos) return true;
    }
  }
  return false;
}

std::vector<const Node*> Sorted(const Model& m, const View& v) {
  std::vector<const Node*> out;
  for (const auto& [name, n] : m.nodes) {
    if (Matches(n, v.filter)) out.push_back(&n);
  }
  auto by_name = [](const Node* a, const Node* b) { return NaturalLess(a->name, b->name); };
  auto key = [&](const Node* n) -> double {
    switch (v.sort) {
      case SortKey::kUtil: return n->MeanUtil().value_or(-1);
      case SortKey::kFreeGpus: return static_cast<double>(n->gpus.size()) - n->BusyGpus();
      case SortKey::kPower: return n->PowerW();
      case SortKey::kState: return n->state == "ready" ? 0 : 1;  // nodes needing a look first
      case SortKey::kName: return 0;
    }
    return 0;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Node* a, const Node* b) {
    double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return by_name(a, b);
  });
  return out;
}

std::vector<ListLine> Lines(const Model& m, const View& v) {
  std::vector<ListLine> out;
  for (const Node* n : Sorted(m, v)) {
    out.push_back({n, -1});
    if (v.expand_all || v.expanded.count(n->name) > 0) {
      for (int i = 0; i < static_cast<int>(n->gpus.size()); ++i) out.push_back({n, i});
    }
  }
  return out;
}

// Lines above and below the list: title, totals, jobs (summary + shown), list header, footer.
int JobLinesShown(const Model& m, int rows) {
  if (m.user.empty() || !m.jobs_known) return 0;
  int room = std::max(0, (rows - 6) / 3);
  return std::min(room, static_cast<int>(m.jobs.size()));
}

int ListArea(const Model& m, int rows) {
  int jobs = JobLinesShown(m, rows);
  bool more = jobs < static_cast<int>(m.jobs.size()) && jobs > 0;
  return std::max(0, rows - 5 - jobs - (more ? 1 : 0));
}

void Clamp(View& v, int lines, int area) {
  v.selected = std::clamp(v.selected, 0, std::max(0, lines - 1));
  if (area <= 0) {
    v.scroll = 0;
    return;
  }
  if (v.selected < v.scroll) v.scroll = v.selected;
  if (v.selected >= v.scroll + area) v.scroll = v.selected - area + 1;
  v.scroll = std::clamp(v.scroll, 0, std::max(0, lines - area));
}

size_t NameWidth(const std::vector<ListLine>& lines) {
  size_t w = 4;
  for (const auto& l : lines) w = std::max(w, l.node->name.size());
  return std::min<size_t>(w, 24);
}

std::string NodeLine(const Node& n, size_t name_w, int cols) {
  std::optional<double> mem;
  if (n.mem_used && n.mem_total && *n.mem_total > 0) {
    mem = 100.0 * static_cast<double>(*n.mem_used) / static_cast<double>(*n.mem_total);
  }
  std::string load = "-";
  if (n.load1) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f", *n.load1);
    load = buf;
  }
  std::string line = Pad(n.name, name_w) + " " + Pad(n.state, 8) + " " + Pad(Pct(n.cpu_pct), 4, true) +
                     " " + Pad(Pct(mem), 4, true) + " " + Pad(load, 5, true) + " " +
                     Pad(std::to_string(n.BusyGpus()) + "/" + std::to_string(n.gpus.size()), 5, true) +
                     " " + Pad(Pct(n.MeanUtil()), 4, true) + " " + Pad(Watts(n.PowerW()), 6, true) + " ";
  // The GPU map takes what is left of the line.
  int room = cols - static_cast<int>(line.size()) - 2;
  std::string map;
  for (const auto& g : n.gpus) map += GpuGlyph(g);
  if (room > 0 && static_cast<int>(map.size()) > room) map = map.substr(0, static_cast<size_t>(room - 1)) + ">";
  if (room > 0) line += "[" + map + "]";
  return line;
}

std::string GpuLine(const Gpu& g, int cols) {
  std::string mem = "-";
  if (g.mem_used && g.mem_total) mem = Gib(*g.mem_used) + "/" + Gib(*g.mem_total) + "GiB";
  std::string power = g.power_w ? Watts(*g.power_w) : "-";
  if (g.power_limit_w) power += "/" + Watts(*g.power_limit_w);
  std::string temp = "-";
  if (g.temperature_c) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0fC", *g.temperature_c);
    temp = buf;
  }
  std::string who;
  for (const auto& u : g.users) who += (who.empty() ? "" : ",") + u;
  std::string procs;
  for (const auto& p : g.processes) procs += (procs.empty() ? "" : "; ") + p;
  std::string line = "  " + Pad(std::to_string(g.index), 3, true) + " " + Pad(g.model, 16) + " " + Bar(g.util_pct, 14) +
                     " " + Pad(mem, 13) + " " + Pad(temp, 4, true) + " " + Pad(power, 11) + " " +
                     (g.state.empty() || g.state == "ok" ? "" : g.state + " ") + (who.empty() ? "-" : who) +
                     (procs.empty() ? "" : "  " + procs);
  return Fit(line, cols);
}

std::string JobLine(const Job& j, int cols) {
  std::string line = "  " + Pad("#" + std::to_string(j.id), 8) + Pad(j.name, 20) + " " + Pad(j.state, 9) + " " +
                     Pad(std::to_string(j.tasks) + (j.tasks == 1 ? " task" : " tasks"), 9) + " " +
                     Pad(std::to_string(j.gpus) + (j.gpus == 1 ? " GPU" : " GPUs"), 8) + " " +
                     (j.nodes.empty() ? (j.queue.empty() ? "" : "queue " + j.queue) : j.nodes);
  return Fit(line, cols);
}

const char* kHelp[] = {
    "Keys",
    "  q, Ctrl-C        quit",
    "  j/k, Down/Up     move",
    "  PgDn/PgUp, space page down / up",
    "  g/G, Home/End    first / last line",
    "  Enter, e         expand or fold the node (a line per GPU)",
    "  a                expand or fold every node",
    "  s                sort: name, utilisation, free GPUs, power, state",
    "  /                filter by node name, state or GPU user (Enter applies, Esc cancels)",
    "  Esc              clear the filter",
    "  ?, h             this help (any key closes it)",
    "",
    "GPU map: one character per GPU, _ idle, . : - = + * # % @ busier, ? not reported",
};

}  // namespace

int Node::BusyGpus() const {
  int busy = 0;
  for (const auto& g : gpus) busy += g.processes.empty() ? 0 : 1;
  return busy;
}

std::optional<double> Node::MeanUtil() const {
  double sum = 0;
  int n = 0;
  for (const auto& g : gpus) {
    if (g.util_pct) {
      sum += *g.util_pct;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

double Node::PowerW() const {
  double w = 0;
  for (const auto& g : gpus) w += g.power_w.value_or(0);
  return w;
}

Node NodeFromEvents(const std::string& name, const api::Json& node_event, const api::Json& sample) {
  Node n;
  n.name = name;
  n.state = Text(node_event, "state", "-");
  const api::Json empty = api::Json::object();
  const api::Json& host = sample.is_object() && sample.contains("host") ? sample["host"] : empty;
  n.cpu_pct = Num(host, "cpu_percent");
  n.load1 = Num(host, "load1");
  n.mem_total = Count(host, "mem_total_bytes");
  if (auto avail = Count(host, "mem_available_bytes"); avail && n.mem_total) {
    n.mem_used = *n.mem_total - std::min(*n.mem_total, *avail);
  }
  if (!sample.is_object() || !sample.contains("gpus") || !sample["gpus"].is_array()) return n;
  for (const auto& j : sample["gpus"]) {
    if (!j.is_object()) continue;
    Gpu g;
    g.index = static_cast<int>(Num(j, "index").value_or(static_cast<double>(n.gpus.size())));
    g.model = Text(j, "name");
    g.state = Text(j, "state");
    g.util_pct = Num(j, "util_gpu_pct");
    g.mem_used = Count(j, "memory_used_bytes");
    g.mem_total = Count(j, "memory_total_bytes");
    g.temperature_c = Num(j, "temperature_c");
    if (auto mw = Num(j, "power_mw")) g.power_w = *mw / 1000;
    if (auto mw = Num(j, "power_limit_mw")) g.power_limit_w = *mw / 1000;
    if (j.contains("users") && j["users"].is_array()) {
      for (const auto& u : j["users"]) {
        if (u.is_string()) g.users.push_back(u.get<std::string>());
      }
    }
    if (j.contains("processes") && j["processes"].is_array()) {
      for (const auto& p : j["processes"]) {
        if (!p.is_object()) continue;
        std::string entry = std::to_string(static_cast<int64_t>(Num(p, "pid").value_or(0)));
        std::string cmd = Text(p, "command");
        if (!cmd.empty()) entry += " " + (cmd.size() > 32 ? cmd.substr(0, 29) + "..." : cmd);
        g.processes.push_back(entry);
      }
    }
    n.gpus.push_back(std::move(g));
  }
  return n;
}

std::vector<Job> JobsFromList(const api::Json& list) {
  std::vector<Job> out;
  if (!list.is_object() || !list.contains("jobs") || !list["jobs"].is_array()) return out;
  for (const auto& j : list["jobs"]) {
    if (!j.is_object()) continue;
    Job job;
    job.state = Text(j, "state");
    if (job.state != "running" && job.state != "starting" && job.state != "pending") continue;
    job.id = static_cast<int64_t>(Num(j, "id").value_or(0));
    job.name = Text(j, "name");
    job.queue = Text(j, "queue");
    std::set<std::string> nodes;
    if (j.contains("tasks") && j["tasks"].is_array()) {
      for (const auto& t : j["tasks"]) {
        if (!t.is_object()) continue;
        ++job.tasks;
        if (t.contains("gpus") && t["gpus"].is_array()) job.gpus += static_cast<int>(t["gpus"].size());
        std::string node = Text(t, "node");
        if (!node.empty()) nodes.insert(node);
      }
    }
    for (const auto& n : nodes) job.nodes += (job.nodes.empty() ? "" : ",") + n;
    out.push_back(std::move(job));
  }
  std::stable_sort(out.begin(), out.end(), [](const Job& a, const Job& b) {
    auto rank = [](const Job& j) { return j.state == "pending" ? 1 : 0; };
    return rank(a) < rank(b);
  });
  return out;
}

const char* SortName(SortKey k) {
  switch (k) {
    case SortKey::kName: return "name";
    case SortKey::kUtil: return "utilisation";
    case SortKey::kFreeGpus: return "free GPUs";
    case SortKey::kPower: return "power";
    case SortKey::kState: return "state";
  }
  return "?";
}

std::vector<Key> ParseKeys(std::string_view in) {
  std::vector<Key> keys;
  size_t i = 0;
  while (i < in.size()) {
    const char c = in[i];
    if (c == '\x1b') {
      if (i + 1 >= in.size() || (in[i + 1] != '[' && in[i + 1] != 'O')) {
        keys.push_back({KeyCode::kEscape, 0});
        ++i;
        continue;
      }
      // CSI / SS3: ESC [ params final, ESC O final.
      size_t j = i + 2;
      while (j < in.size() && (std::isdigit(static_cast<unsigned char>(in[j])) || in[j] == ';')) ++j;
      if (j >= in.size()) break;  // incomplete: dropped
      std::string_view params = in.substr(i + 2, j - i - 2);
      const char final = in[j];
      i = j + 1;
      switch (final) {
        case 'A': keys.push_back({KeyCode::kUp, 0}); break;
        case 'B': keys.push_back({KeyCode::kDown, 0}); break;
        case 'H': keys.push_back({KeyCode::kHome, 0}); break;
        case 'F': keys.push_back({KeyCode::kEnd, 0}); break;
        case '~':
          if (params == "5") keys.push_back({KeyCode::kPageUp, 0});
          else if (params == "6") keys.push_back({KeyCode::kPageDown, 0});
          else if (params == "1" || params == "7") keys.push_back({KeyCode::kHome, 0});
          else if (params == "4" || params == "8") keys.push_back({KeyCode::kEnd, 0});
          break;
        default: break;  // other keys: ignored
      }
      continue;
    }
    if (c == '\r' || c == '\n') keys.push_back({KeyCode::kEnter, 0});
    else if (c == 0x7f || c == 0x08) keys.push_back({KeyCode::kBackspace, 0});
    else keys.push_back({KeyCode::kChar, c});
    ++i;
  }
  return keys;
}

void ApplyKey(View& v, const Key& key, const Model& m, int rows) {
  if (v.editing_filter) {
    switch (key.code) {
      case KeyCode::kEnter:
        v.filter = v.filter_draft;
        v.editing_filter = false;
        v.selected = v.scroll = 0;
        break;
      case KeyCode::kEscape:
        v.editing_filter = false;
        break;
      case KeyCode::kBackspace:
        if (!v.filter_draft.empty()) v.filter_draft.pop_back();
        break;
      case KeyCode::kChar:
        if (key.ch == 0x03) v.quit = true;
        else if (std::isprint(static_cast<unsigned char>(key.ch)) && v.filter_draft.size() < 64) v.filter_draft += key.ch;
        break;
      default: break;
    }
    return;
  }
  if (v.help) {  // any key closes the help (Ctrl-C and q still quit)
    v.help = false;
    if (key.code == KeyCode::kChar && (key.ch == 'q' || key.ch == 0x03)) v.quit = true;
    return;
  }
  const int area = std::max(1, ListArea(m, rows));
  const std::vector<ListLine> lines = Lines(m, v);
  const int last = std::max(0, static_cast<int>(lines.size()) - 1);
  switch (key.code) {
    case KeyCode::kUp: v.selected = std::max(0, v.selected - 1); break;
    case KeyCode::kDown: v.selected = std::min(last, v.selected + 1); break;
    case KeyCode::kPageUp: v.selected = std::max(0, v.selected - area); break;
    case KeyCode::kPageDown: v.selected = std::min(last, v.selected + area); break;
    case KeyCode::kHome: v.selected = 0; break;
    case KeyCode::kEnd: v.selected = last; break;
    case KeyCode::kEscape: v.filter.clear(); v.selected = v.scroll = 0; break;
    case KeyCode::kEnter:
    case KeyCode::kBackspace:
    case KeyCode::kChar: {
      char c = key.code == KeyCode::kEnter ? '\r' : key.code == KeyCode::kBackspace ? 0 : key.ch;
      switch (c) {
        case 'q': case 'Q': case 0x03: v.quit = true; break;
        case 'j': v.selected = std::min(last, v.selected + 1); break;
        case 'k': v.selected = std::max(0, v.selected - 1); break;
        case ' ': v.selected = std::min(last, v.selected + area); break;
        case 'b': v.selected = std::max(0, v.selected - area); break;
        case 'g': v.selected = 0; break;
        case 'G': v.selected = last; break;
        case '\r': case 'e': {
          if (lines.empty()) break;
          const ListLine& l = lines[static_cast<size_t>(std::clamp(v.selected, 0, last))];
          const std::string& name = l.node->name;
          if (v.expand_all) {  // folding one node of "all": every other stays open
            v.expand_all = false;
            for (const auto& [n, node] : m.nodes) v.expanded.insert(n);
            v.expanded.erase(name);
          } else if (!v.expanded.erase(name)) {
            v.expanded.insert(name);
          }
          // The selection stays on the node's own line.
          std::vector<ListLine> now = Lines(m, v);
          for (size_t i = 0; i < now.size(); ++i) {
            if (now[i].node->name == name && now[i].gpu < 0) v.selected = static_cast<int>(i);
          }
          break;
        }
        case 'a':
          v.expand_all = !v.expand_all;
          v.expanded.clear();
          v.selected = v.scroll = 0;
          break;
        case 's':
          v.sort = static_cast<SortKey>((static_cast<int>(v.sort) + 1) % 5);
          v.selected = v.scroll = 0;
          break;
        case '/':
          v.editing_filter = true;
          v.filter_draft = v.filter;
          break;
        case '?': case 'h': v.help = true; break;
        default: break;
      }
      break;
    }
  }
  Clamp(v, static_cast<int>(Lines(m, v).size()), area);
}

int DisplayWidth(std::string_view line) {
  int w = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      i += 2;
      while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
      continue;
    }
    if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80) ++w;  // UTF-8 lead bytes only
  }
  return w;
}

std::vector<std::string> Render(const Model& m, View& v, int rows, int cols, bool color) {
  std::vector<std::string> out;
  if (rows <= 0) return out;
  cols = std::max(cols, 1);
  const std::string rev = color ? "\x1b[7m" : "", bold = color ? "\x1b[1m" : "", reset = color ? "\x1b[0m" : "";
  auto styled = [&](const std::string& style, const std::string& text) {
    return style.empty() ? text : style + Pad(Fit(text, cols), static_cast<size_t>(cols)) + reset;
  };

  // Title.
  std::string title = "rota top  " + m.server + "  " + FormatRfc3339(m.now_ms);
  if (!m.user.empty()) title += "  user " + m.user;
  if (!m.notice.empty()) title += "  (" + m.notice + ")";
  out.push_back(styled(bold, Fit(title, cols)));

  // Totals.
  int ready = 0, gpus = 0, busy = 0, reporting = 0;
  double util_sum = 0, power = 0;
  std::map<std::string, int> other_states;
  for (const auto& [name, n] : m.nodes) {
    if (n.state == "ready") ++ready;
    else ++other_states[n.state];
    gpus += static_cast<int>(n.gpus.size());
    busy += n.BusyGpus();
    power += n.PowerW();
    for (const auto& g : n.gpus) {
      if (g.util_pct) {
        util_sum += *g.util_pct;
        ++reporting;
      }
    }
  }
  std::string totals = "Nodes " + std::to_string(m.nodes.size()) + ": " + std::to_string(ready) + " ready";
  for (const auto& [state, count] : other_states) totals += ", " + std::to_string(count) + " " + state;
  totals += "   GPUs " + std::to_string(gpus) + ": " + std::to_string(busy) + " busy, " +
            std::to_string(gpus - busy) + " free   util " +
            Bar(reporting > 0 ? std::optional<double>(util_sum / reporting) : std::nullopt, 14) + "   power " +
            Watts(power);
  out.push_back(Fit(totals, cols));

  // The user's jobs.
  const int job_lines = JobLinesShown(m, rows);
  if (m.user.empty()) {
    out.push_back(Fit("My jobs: sign in (rota login) to see them here", cols));
  } else if (!m.jobs_known) {
    out.push_back(Fit("My jobs: reading...", cols));
  } else {
    int running = 0, pending = 0;
    for (const auto& j : m.jobs) (j.state == "pending" ? pending : running)++;
    out.push_back(Fit("My jobs: " + std::to_string(running) + " running, " + std::to_string(pending) + " pending",
                      cols));
    for (int i = 0; i < job_lines; ++i) out.push_back(JobLine(m.jobs[static_cast<size_t>(i)], cols));
    if (job_lines > 0 && job_lines < static_cast<int>(m.jobs.size())) {
      out.push_back(Fit("  ... " + std::to_string(m.jobs.size() - static_cast<size_t>(job_lines)) +
                            " more: rota jobs --mine",
                        cols));
    }
  }

  // The node list.
  const std::vector<ListLine> lines = Lines(m, v);
  const size_t name_w = NameWidth(lines);
  const int area = ListArea(m, rows);
  Clamp(v, static_cast<int>(lines.size()), area);
  std::string header = Pad("NODE", name_w) + " " + Pad("STATE", 8) + " " + Pad("CPU", 4, true) + " " +
                       Pad("MEM", 4, true) + " " + Pad("LOAD", 5, true) + " " + Pad("BUSY", 5, true) + " " +
                       Pad("UTIL", 4, true) + " " + Pad("POWER", 6, true) + " GPU MAP";
  out.push_back(styled(rev, Fit(header, cols)));
  if (v.help) {
    for (int i = 0; i < area; ++i) {
      out.push_back(i < static_cast<int>(std::size(kHelp)) ? Fit(kHelp[i], cols) : "");
    }
  } else {
    for (int i = 0; i < area; ++i) {
      const int idx = v.scroll + i;
      if (idx >= static_cast<int>(lines.size())) {
        out.push_back(lines.empty() && i == 0 ? Fit(m.nodes.empty() ? "  (no nodes yet)" : "  (no node matches the filter)", cols) : "");
        continue;
      }
      const ListLine& l = lines[static_cast<size_t>(idx)];
      std::string text = l.gpu < 0 ? Fit(NodeLine(*l.node, name_w, cols), cols)
                                   : GpuLine(l.node->gpus[static_cast<size_t>(l.gpu)], cols);
      out.push_back(idx == v.selected ? styled(rev, text) : text);
    }
  }

  // Footer.
  std::string footer;
  if (v.editing_filter) {
    footer = "Filter: " + v.filter_draft + "_   (Enter applies, Esc cancels)";
  } else {
    footer = "q quit  j/k move  PgUp/PgDn page  Enter expand  a all  s sort:" + std::string(SortName(v.sort)) +
             "  / filter" + (v.filter.empty() ? "" : ":" + v.filter) + "  ? help";
    std::string where = lines.empty() ? "0/0"
                                      : std::to_string(v.scroll + 1) + "-" +
                                            std::to_string(std::min<int>(static_cast<int>(lines.size()), v.scroll + area)) +
                                            "/" + std::to_string(lines.size());
    // Where the view is stays visible; the key list gives way on a narrow terminal.
    const int room = cols - static_cast<int>(where.size()) - 2;
    if (room >= 8) {
      footer = Fit(footer, room);
      footer += std::string(static_cast<size_t>(cols - static_cast<int>(footer.size()) - static_cast<int>(where.size())), ' ') + where;
    }
  }
  out.push_back(styled(rev, Fit(footer, cols)));

  // Exactly `rows` lines: a terminal too short for the fixed lines keeps the top ones.
  if (static_cast<int>(out.size()) > rows) {
    out.resize(static_cast<size_t>(rows));
  }
  while (static_cast<int>(out.size()) < rows) out.push_back("");
  return out;
}

}  // namespace rota::cli::top
