#pragma once
// rota top's screen, decided without a terminal: the cluster as last seen (a
// Model built from the event stream and the job list), what the user chose to
// look at (a View: sort, filter, expanded nodes, selection, scroll), a key
// press applied to the View, and the frame rendered for a terminal of a given
// size. Pure: no I/O, time comes in the Model; the shell (top_cmd.cc) reads
// the stream and the keys and writes the frames.
//
// Frame layout, top to bottom (each line at most `cols` columns, exactly
// `rows` lines, so nothing scrolls):
//   title          server, time, the signed-in user
//   totals         nodes by state, GPUs busy/free, mean utilisation (a bar), power
//   my jobs        a summary line and up to a third of the screen of running
//                  and pending jobs of the user
//   list header    columns of the node lines
//   node list      one line per node (state, CPU, memory, a character per GPU
//                  showing its utilisation, busy GPUs, power); an expanded node
//                  is followed by a line per GPU (utilisation bar, memory,
//                  temperature, power, users and processes). Scrolls.
//   footer         keys, sort, filter, which list lines are shown

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"

namespace rota::cli::top {

struct Gpu {
  int index = 0;
  std::string model;
  std::string state;
  std::optional<double> util_pct;
  std::optional<uint64_t> mem_used, mem_total;
  std::optional<double> temperature_c, power_w, power_limit_w;
  std::vector<std::string> users;
  std::vector<std::string> processes;  // "PID COMMAND"
};

struct Node {
  std::string name;
  std::string state;  // "ready", "down", ... ("-" before the node's event)
  std::optional<double> cpu_pct, load1;
  std::optional<uint64_t> mem_used, mem_total;
  std::vector<Gpu> gpus;

  int BusyGpus() const;               // GPUs with at least one process
  std::optional<double> MeanUtil() const;  // over GPUs that report utilisation
  double PowerW() const;              // sum over GPUs (0 when none report it)
};

// A node from its last "node" and "sample" events of GET /api/v1/stream (either
// may be null: not seen yet). Absent or mistyped fields stay unset.
Node NodeFromEvents(const std::string& name, const api::Json& node_event, const api::Json& sample);

struct Job {
  int64_t id = 0;
  std::string name, state, queue;
  int tasks = 0;
  int gpus = 0;
  std::string nodes;  // distinct nodes of its tasks, comma-separated
};

// The user's jobs from GET /api/v1/jobs?mine=true (the "jobs" array); pending
// and running ones only, running first.
std::vector<Job> JobsFromList(const api::Json& list);

struct Model {
  std::string server;
  std::string user;        // "" when not signed in
  int64_t now_ms = 0;
  std::map<std::string, Node> nodes;
  std::vector<Job> jobs;
  bool jobs_known = false;  // the job list was read at least once
  std::string notice;       // e.g. "stream lost, reconnecting"; shown in the title
};

enum class SortKey { kName, kUtil, kFreeGpus, kPower, kState };
const char* SortName(SortKey k);

struct View {
  SortKey sort = SortKey::kName;
  std::string filter;          // substring of a node's name or state, or a GPU user
  bool editing_filter = false;
  std::string filter_draft;
  std::set<std::string> expanded;  // node names
  bool expand_all = false;
  int selected = 0;  // index into the list lines
  int scroll = 0;    // first list line shown
  bool help = false;
  bool quit = false;
};

enum class KeyCode { kChar, kUp, kDown, kPageUp, kPageDown, kHome, kEnd, kEnter, kEscape, kBackspace };
struct Key {
  KeyCode code = KeyCode::kChar;
  char ch = 0;  // for kChar
};

// Splits bytes read from a terminal into keys (ANSI/VT escape sequences for the
// arrows and paging keys; an escape followed by nothing is kEscape). Unknown
// sequences are dropped.
std::vector<Key> ParseKeys(std::string_view bytes);

// Applies one key. `rows` is the terminal's height (for paging).
void ApplyKey(View& view, const Key& key, const Model& model, int rows);

// The frame for a rows x cols terminal: exactly `rows` lines (none wider than
// `cols`). Clamps the view's selection and scroll to what exists. Lines may
// carry SGR escapes (reverse video for the headers and the selection); they
// take no columns.
std::vector<std::string> Render(const Model& model, View& view, int rows, int cols, bool color = true);

// The displayed width of a rendered line (escapes skipped).
int DisplayWidth(std::string_view line);

}  // namespace rota::cli::top
