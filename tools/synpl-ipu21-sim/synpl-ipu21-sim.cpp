//===- synpl-ipu21-sim.cpp - Run an ipu21 program on the BSP simulator ----===//
//
// Loads a program file (ProgramFile.h), runs its main step N times on the
// simulator (Simulator.h) and prints the cycle report, optionally with a
// tile's memory map, tensors and streams read from and written to text files
// of whitespace-separated numbers. A training program (one with a host
// side) is trained instead by the runtime's executor (Training.h). Every failure is one line on stderr,
// "synpl-ipu21-sim: error: ...", and exit status 1.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"
#include "Training.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace synpl::ipu21;
using namespace synpl::ipu21::sim;

namespace {

/// The help text, with the ipu21's facts filled in (Facts.h).
std::string helpText() {
  const Facts f = ipu21Facts();
  char buf[4096];
  std::snprintf(buf, sizeof(buf), R"(usage: synpl-ipu21-sim PROGRAM [options]

Runs an ipu21 program file (written by synpl-translate
--synpl-ipu21-to-program) on a bulk-synchronous (BSP) simulator of the
Graphcore IPU and reports the cycles it takes.

What it models (figures of the ipu21; an "ipu2" program gets its own):
  values   every tensor and buffer element in its own type (f32, f16,
           f8E4M3FN, f8E5M2, i32, ui8), rounded to nearest-even on every
           write; the AMP's f16 partial sums rounded to half after each
           %lld-input-channel pass. Memory starts as zeroes.
  compute  a compute set costs its slowest tile; a tile the sum of its
           vertices. AMP matmul: %lld cycles per call + %lld per further
           16x16 weight block + %lld per row and block (f16, f8; FP8 is
           costed as FP16); reductions, copies and fills at the vector
           and memcpy rates plus %lld cycles of supervisor overhead.
           Generic (UOp) codelets run their own code: each executed UOp
           takes issue slots (most 1, Index 2 per dimension, constants
           none), a worker issuing one every %lld cycles. A UOp vertex
           is a MultiVertex: its widest parallel range is cut into up
           to target-workers parts of ceil(n / parts) iterations, one
           per worker; all the parts of a tile's UOp vertices cost
           max(longest part x %lld, total of the parts) cycles. An index
           outside its window or a division by zero stops the run.
  exchange ceil(most bytes any tile sends or receives / %lld bytes per
           cycle); a send is paid once by its source however many tiles
           receive it; both tiles of an exchange-bus pair receiving the
           same send pay half each.
  sync     %lld cycles each: a PLACEHOLDER. The chip's sync cost is not
           public; totals that include syncs are only as good as it is.
  streams  bytes over the host link at %g GB/s.
Every figure is a hardware fact with its source in
include/synpl/Target/IPU21/Facts.h; the program's target names the chip
("ipu21" or "ipu2") and its clock.
)",
                (long long)f.ampInChansF16, (long long)f.ampCallOverheadCycles,
                (long long)f.ampBlockReloadCycles, (long long)f.ampCyclesPer16x16Row,
                (long long)f.supervisorOverheadCycles, (long long)f.workers,
                (long long)f.workers, (long long)f.exchangeBytesPerCycle,
                (long long)f.syncCycles, f.hostBytesPerSecond / 1e9);
  return std::string(buf) + R"(
options:
  --runs N                run main N times (default 1); the report sums them
  --report=text|json|none how to print the cycle report (default text)
  --memory-map=TILE       also print the objects in TILE's memory by address
  --tensor-in NAME=FILE   before the first run, set tensor NAME to FILE's
                          numbers (row-major, exactly its element count)
  --tensor-out NAME=FILE  after the last run, write tensor NAME to FILE
  --stream-in NAME=FILE   feed host stream NAME: each non-empty line of FILE
                          is the values of one transfer, in order
  --stream-out NAME=FILE  write each transfer of host stream NAME to FILE as
                          one line
  --timing-only           keep no values: charge cycles only (faster, less
                          memory; a program with an If step cannot run,
                          nor one with UOp vertices: their cycles are
                          counted as they run)
  --help                  print this help
A FILE of "-" is standard input (inputs) or standard output (outputs).

A training program (synplc --target=ipu21 on a spec) carries its host side:
the runtime's executor trains it as it trains a compiled host program, with
this simulator as its device, printing the same epoch=... lines and then
the simulated cycles per training and evaluation step. After PROGRAM it
takes the options of a compiled training program (docs/training.md):
  --data DIR  --epochs N  --steps N  --no-eval  --metrics FILE  --quiet
  --checkpoint FILE  --checkpoint-every N  --resume FILE  --save-weights FILE
  --check-finite  --profile ...
as well as --report, --memory-map and --tensor-out (after the last step).
  synpl-ipu21-sim fm.ipu --data /usr/share/datasets/fashion-mnist --steps 100
Numbers are decimal (as strtod reads them: 1, -2.5e-3, inf, nan), separated
by whitespace; outputs print the shortest text that reads back to the same
element.
)";
}

[[noreturn]] void fatal(const std::string &msg) {
  std::fprintf(stderr, "synpl-ipu21-sim: error: %s\n", msg.c_str());
  std::exit(1);
}

bool readFile(const std::string &path, std::string &out) {
  std::FILE *f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    out.append(chunk, n);
  bool ok = !std::ferror(f);
  if (f != stdin)
    std::fclose(f);
  return ok;
}

/// The whitespace-separated numbers of `text`; false (with `error`) on a
/// token that is not one.
bool parseNumbers(const std::string &text, std::vector<double> &out, std::string &error) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::strchr(" \t\r\n\f\v", text[i]) && text[i])
      ++i;
    if (i == text.size())
      break;
    size_t j = i;
    while (j < text.size() && !std::strchr(" \t\r\n\f\v", text[j]) && text[j])
      ++j;
    std::string token = text.substr(i, j - i);
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(token.c_str(), &end);
    if (token.empty() || *end != '\0') {
      error = "'" + token.substr(0, 40) + "' is not a number";
      return false;
    }
    out.push_back(v);
    i = j == i ? j + 1 : j;
  }
  return true;
}

std::string formatNumbers(const std::vector<double> &values) {
  std::string s;
  char buf[64];
  for (size_t i = 0; i < values.size(); ++i) {
    // Every element of a float type is a float: its shortest float text
    // reads back to it; other values (large i32) print as doubles.
    double v = values[i];
    float f = float(v);
    auto r = (std::isnan(v) || double(f) == v) ? std::to_chars(buf, buf + sizeof(buf), f)
                                               : std::to_chars(buf, buf + sizeof(buf), v);
    if (i)
      s += ' ';
    s.append(buf, r.ptr);
  }
  return s;
}

/// A file written as the run goes (stream outputs) or at its end.
class OutFile {
public:
  explicit OutFile(const std::string &path) : path(path) {
    f = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
    if (!f)
      fatal("cannot write '" + path + "': " + std::strerror(errno));
  }
  ~OutFile() { close(); }
  void line(const std::string &text) {
    if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fputc('\n', f) == EOF)
      fatal("cannot write '" + path + "'");
  }
  void close() {
    if (!f)
      return;
    bool ok = f == stdout ? std::fflush(f) == 0 : std::fclose(f) == 0;
    f = nullptr;
    if (!ok)
      fatal("cannot write '" + path + "'");
  }

private:
  std::string path;
  std::FILE *f = nullptr;
};

struct Binding {
  std::string name, file;
};

/// NAME=FILE, split at the first '='.
Binding binding(const std::string &option, const std::string &value) {
  size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == value.size())
    fatal(option + " takes NAME=FILE, not '" + value + "'");
  return {value.substr(0, eq), value.substr(eq + 1)};
}

bool parseInt(const std::string &s, int64_t &v) {
  if (s.empty())
    return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

void printMemoryMap(const Simulator &sim, const Program &program, int64_t tile) {
  if (tile < 0)
    return;
  std::printf("memory of tile %lld (%lld bytes, 0x%llx-0x%llx):\n", (long long)tile,
              (long long)program.target.bytesPerTile, (long long)program.target.sramBase,
              (long long)program.target.sramEnd);
  std::printf("  %-10s %10s  %-8s %s\n", "address", "bytes", "kind", "name");
  for (const MemoryObject &m : sim.memoryMap(tile))
    std::printf("  0x%-8llx %10lld  %-8s %s\n", (long long)m.address, (long long)m.bytes,
                memoryKindName(m.kind), m.name.c_str());
}

void writeTensors(const Simulator &sim, const std::vector<Binding> &tensorOut) {
  std::string error;
  for (const Binding &b : tensorOut) {
    std::vector<double> values;
    if (!sim.getTensor(b.name, values, error))
      fatal("--tensor-out " + b.name + ": " + error);
    OutFile out(b.file);
    out.line(formatNumbers(values));
    out.close();
  }
}

/// The simulated cycles of a training run's steps, one line each kind.
std::string formatSummary(const TrainingSummary &s, const Program &program) {
  std::string out;
  char line[256];
  double hz = double(program.target.clockHz);
  auto add = [&](const char *what, int64_t steps, int64_t cycles) {
    if (!steps)
      return;
    double per = double(cycles) / double(steps);
    std::snprintf(line, sizeof(line),
                  "ipu21: %lld %s steps, %.0f cycles per step (%.3f ms at %.2f GHz)\n",
                  (long long)steps, what, per, per / hz * 1e3, hz / 1e9);
    out += line;
  };
  add("training", s.trainSteps, s.trainCycles);
  add("evaluation", s.evalSteps, s.evalCycles);
  return out;
}

} // namespace

int main(int argc, char **argv) {
  std::string programPath, report = "text";
  int64_t runs = 1, mapTile = -1;
  bool timingOnly = false, reportGiven = false, runsGiven = false;
  std::vector<Binding> tensorIn, tensorOut, streamIn, streamOut;
  // A training program's options (the executor's), after PROGRAM.
  std::vector<std::string> training;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // --opt VALUE and --opt=VALUE both work for options with a value.
    auto value = [&](const char *opt, std::string &out) {
      std::string o = opt;
      if (arg == o) {
        if (i + 1 >= argc)
          fatal(o + " needs a value");
        out = argv[++i];
        return true;
      }
      if (arg.compare(0, o.size() + 1, o + "=") == 0) {
        out = arg.substr(o.size() + 1);
        return true;
      }
      return false;
    };
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::fputs(helpText().c_str(), stdout);
      return 0;
    } else if (arg == "--timing-only") {
      timingOnly = true;
    } else if (value("--runs", v)) {
      if (!parseInt(v, runs) || runs < 1)
        fatal("--runs takes a positive count, not '" + v + "'");
      runsGiven = true;
    } else if (value("--report", v)) {
      if (v != "text" && v != "json" && v != "none")
        fatal("--report is text, json or none, not '" + v + "'");
      report = v;
      reportGiven = true;
    } else if (value("--memory-map", v)) {
      if (!parseInt(v, mapTile) || mapTile < 0)
        fatal("--memory-map takes a tile number, not '" + v + "'");
    } else if (value("--tensor-in", v)) {
      tensorIn.push_back(binding("--tensor-in", v));
    } else if (value("--tensor-out", v)) {
      tensorOut.push_back(binding("--tensor-out", v));
    } else if (value("--stream-in", v)) {
      streamIn.push_back(binding("--stream-in", v));
    } else if (value("--stream-out", v)) {
      streamOut.push_back(binding("--stream-out", v));
    } else if (arg.size() > 1 && arg[0] == '-' && !programPath.empty()) {
      // The executor's (a training program's), with its value if one follows.
      training.push_back(arg);
      if (arg.find('=') == std::string::npos && i + 1 < argc && argv[i + 1][0] != '-')
        training.push_back(argv[++i]);
    } else if (arg.size() > 1 && arg[0] == '-') {
      fatal("unknown option '" + arg + "' (see --help)");
    } else if (programPath.empty()) {
      programPath = arg;
    } else {
      fatal("one program at a time: '" + programPath + "' and '" + arg + "'");
    }
  }
  if (programPath.empty())
    fatal("no program file (see --help)");
  if (timingOnly && (!tensorIn.empty() || !tensorOut.empty() || !streamIn.empty()))
    fatal("--timing-only keeps no values: it takes no --tensor-in, --tensor-out or --stream-in");

  Program program;
  std::string error;
  if (!loadProgram(programPath, program, error))
    fatal(error);
  std::optional<Facts> facts = factsFor(program.target.arch);
  if (!facts)
    fatal("the program targets '" + program.target.arch +
          "'; the simulator knows the facts of ipu21 and ipu2");
  if (mapTile >= program.target.tiles)
    fatal("--memory-map: tile " + std::to_string(mapTile) + " is not one of the target's " +
          std::to_string(program.target.tiles));

  bool trains = !program.hostTable.empty();
  if (!trains && !training.empty())
    fatal("unknown option '" + training.front() + "' (see --help; the training options " +
          "belong to a training program, and '" + programPath + "' has no host side)");
  if (trains && (timingOnly || runsGiven || !streamIn.empty() || !streamOut.empty()))
    fatal("'" + programPath + "' is a training program: the executor runs its steps and " +
          "streams (--steps, --epochs, --data); it takes no --runs, --timing-only, " +
          "--stream-in or --stream-out");

  SimOptions options;
  options.values = !timingOnly;
  Simulator sim(program, *facts, options);
  if (!sim.valid(error))
    fatal(error);
  if (trains) {
    if (!tensorIn.empty())
      fatal("--tensor-in " + tensorIn.front().name +
            ": a training program's tensors come from its inits and its data");
    TrainingSummary summary;
    training.insert(training.begin(), "synpl-ipu21-sim " + programPath);
    int status = runTraining(program, sim, training, summary);
    if (summary.trainSteps || summary.evalSteps)
      std::printf("%s", formatSummary(summary, program).c_str());
    if (status != 0)
      return status;
    if (reportGiven && report != "none")
      std::fputs(formatReport(sim.report(), program, report == "json").c_str(), stdout);
    printMemoryMap(sim, program, mapTile);
    writeTensors(sim, tensorOut);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }

  for (const Binding &b : tensorIn) {
    std::string text;
    std::vector<double> values;
    if (!readFile(b.file, text))
      fatal("cannot read '" + b.file + "': " + std::strerror(errno));
    if (!parseNumbers(text, values, error))
      fatal(b.file + ": " + error);
    if (!sim.setTensor(b.name, values, error))
      fatal("--tensor-in " + b.name + ": " + error);
  }

  // Stream inputs: each line one transfer, taken in order.
  StreamQueues pending;
  for (const Binding &b : streamIn) {
    std::string text;
    if (!readFile(b.file, text))
      fatal("cannot read '" + b.file + "': " + std::strerror(errno));
    auto &queue = pending[b.name];
    size_t start = 0, lineNo = 0;
    while (start <= text.size()) {
      size_t nl = text.find('\n', start);
      size_t len = nl == std::string::npos ? std::string::npos : nl - start;
      std::string line = text.substr(start, len);
      ++lineNo;
      std::vector<double> values;
      if (!parseNumbers(line, values, error))
        fatal(b.file + ":" + std::to_string(lineNo) + ": " + error);
      if (!values.empty())
        queue.push_back(std::move(values));
      if (nl == std::string::npos)
        break;
      start = nl + 1;
    }
  }
  sim.setStreamSource(queuedSource(pending));
  std::map<std::string, std::unique_ptr<OutFile>, std::less<>> sinks;
  for (const Binding &b : streamOut)
    sinks[b.name] = std::make_unique<OutFile>(b.file);
  sim.setStreamSink([&](std::string_view stream, const std::vector<double> &values) {
    auto it = sinks.find(stream);
    if (it != sinks.end())
      it->second->line(formatNumbers(values));
  });

  for (int64_t r = 0; r < runs; ++r)
    if (!sim.run(error))
      fatal("run " + std::to_string(r + 1) + ": " + error);
  for (auto &entry : sinks)
    entry.second->close();

  if (report != "none")
    std::fputs(formatReport(sim.report(), program, report == "json").c_str(), stdout);
  printMemoryMap(sim, program, mapTile);
  writeTensors(sim, tensorOut);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
