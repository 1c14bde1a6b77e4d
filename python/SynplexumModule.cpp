//===- SynplexumModule.cpp - synplexum._core, over the C API --------------===//
//
// The native half of the Python package: a context that holds the synplexum
// dialects and collects diagnostics, modules parsed from .syn or MLIR, the
// compile driver and the search reports. Everything goes through the C API
// (include/synpl-c/); the Python half (synplexum/__init__.py) builds the
// user-facing API on top.
//
//===----------------------------------------------------------------------===//
#include "synpl-c/Dialects.h"
#include "synpl-c/Driver.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

MlirStringRef ref(const std::string &s) { return mlirStringRefCreate(s.data(), s.size()); }

void appendTo(MlirStringRef text, void *userData) {
  static_cast<std::string *>(userData)->append(text.data, text.length);
}

/// Raised with the diagnostics of a failed parse or compile.
struct CompileFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An MLIR context with every dialect a compile needs and a handler that
/// keeps the diagnostics of the current call.
class Context {
public:
  Context() {
    MlirDialectRegistry registry = mlirDialectRegistryCreate();
    synplRegisterAllDialects(registry);
    context = mlirContextCreateWithRegistry(registry, /*threadingEnabled=*/false);
    mlirDialectRegistryDestroy(registry);
    mlirContextLoadAllAvailableDialects(context);
    synplRegisterAllPasses();
    mlirContextAttachDiagnosticHandler(context, &Context::handle, this, nullptr);
  }
  ~Context() { mlirContextDestroy(context); }
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  MlirContext get() const { return context; }
  /// The diagnostics since the last take, one string each ("loc: error: ...").
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(diagnostics);
    return out;
  }
  std::vector<std::string> warnings;

private:
  static MlirLogicalResult handle(MlirDiagnostic diagnostic, void *userData) {
    auto *self = static_cast<Context *>(userData);
    std::string text = format(diagnostic);
    MlirDiagnosticSeverity severity = mlirDiagnosticGetSeverity(diagnostic);
    if (severity == MlirDiagnosticError)
      self->diagnostics.push_back(text);
    else if (severity == MlirDiagnosticWarning)
      self->warnings.push_back(text);
    return mlirLogicalResultSuccess();
  }
  /// `loc("f.syn":2:3)` as `f.syn:2:3`, the form a compiler prints.
  static std::string location(MlirLocation loc) {
    std::string text;
    mlirLocationPrint(loc, appendTo, &text);
    const std::string open = "loc(\"";
    size_t quote = text.find("\":", open.size());
    if (text.rfind(open, 0) == 0 && quote != std::string::npos && text.back() == ')')
      return text.substr(open.size(), quote - open.size()) +
             text.substr(quote + 1, text.size() - quote - 2);
    return text;
  }
  static std::string format(MlirDiagnostic diagnostic) {
    std::string text = location(mlirDiagnosticGetLocation(diagnostic));
    switch (mlirDiagnosticGetSeverity(diagnostic)) {
    case MlirDiagnosticError:
      text += ": error: ";
      break;
    case MlirDiagnosticWarning:
      text += ": warning: ";
      break;
    case MlirDiagnosticNote:
      text += ": note: ";
      break;
    case MlirDiagnosticRemark:
      text += ": remark: ";
      break;
    }
    mlirDiagnosticPrint(diagnostic, appendTo, &text);
    for (intptr_t i = 0, e = mlirDiagnosticGetNumNotes(diagnostic); i < e; ++i) {
      std::string note = format(mlirDiagnosticGetNote(diagnostic, i));
      // The op as MLIR prints it for every error: noise next to the source.
      if (note.find(": note: see current operation:") == std::string::npos)
        text += "\n" + note;
    }
    return text;
  }

  MlirContext context;
  std::vector<std::string> diagnostics;
};

/// A module of the context it was parsed in (which it keeps alive).
class Module {
public:
  Module(std::shared_ptr<Context> context, MlirModule module)
      : context(std::move(context)), module(module) {}
  ~Module() { mlirModuleDestroy(module); }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  std::string str() const {
    std::string text;
    mlirOperationPrint(mlirModuleGetOperation(module), appendTo, &text);
    return text;
  }
  std::string phase() const {
    MlirStringRef name = synplPhaseGetName(synplModuleGetPhase(module));
    return std::string(name.data, name.length);
  }
  void compile(const std::string &to, const std::string &from, const std::string &target,
               const std::string &cudaArch, const std::string &ptxas,
               const std::string &system, const std::string &l0Passes,
               std::function<void(std::string)> progress, bool kernelCache,
               const std::string &cacheDir, const std::string &cpu, int optLevel,
               bool searchCache) {
    SynplCompileOptions options = synplCompileOptionsCreate();
    std::unique_ptr<void, void (*)(void *)> guard(
        options.ptr, [](void *p) { synplCompileOptionsDestroy(SynplCompileOptions{p}); });
    synplCompileOptionsSetTo(options, parsePhase(to));
    if (!from.empty())
      synplCompileOptionsSetFrom(options, parsePhase(from));
    if (!synplCompileOptionsSetTarget(options, ref(target)))
      throw py::value_error("target '" + target + "': auto, host, cuda or ipu21");
    synplCompileOptionsSetCudaArch(options, ref(cudaArch));
    synplCompileOptionsSetPtxas(options, ref(ptxas));
    synplCompileOptionsSetSystemFile(options, ref(system));
    synplCompileOptionsSetL0Passes(options, ref(l0Passes));
    if (kernelCache)
      synplCompileOptionsSetKernelCache(options, ref(cacheDir), ref(cpu), optLevel);
    if (searchCache)
      synplCompileOptionsSetSearchCache(options, ref(cacheDir));
    if (progress)
      synplCompileOptionsSetProgress(
          options,
          [](MlirStringRef line, void *userData) {
            (*static_cast<std::function<void(std::string)> *>(userData))(
                std::string(line.data, line.length));
          },
          &progress);
    MlirLogicalResult result = synplCompile(module, options);
    check(result, "compile");
  }
  std::string ptx() const {
    std::string text;
    synplModulePrintPtx(module, appendTo, &text);
    return text;
  }
  void writeObject(const std::string &path, const std::string &cpu, int optLevel) {
    check(synplWriteObject(module, ref(path), ref(cpu), optLevel), "object");
  }
  void writeExecutable(const std::string &path, const std::string &cpu, int optLevel) {
    check(synplWriteExecutable(module, ref(path), ref(cpu), optLevel), "link");
  }
  bool isIPU21Program() const { return synplModuleIsIPU21Program(module); }
  void writeIPU21Program(const std::string &path) {
    check(synplWriteIPU21Program(module, ref(path)), "ipu21 program file");
  }

private:
  static SynplPhase parsePhase(const std::string &name) {
    SynplPhase phase;
    if (!synplPhaseParse(ref(name), &phase))
      throw py::value_error("phase '" + name + "': l3, l2, l1, l0, device or llvm");
    return phase;
  }
  void check(MlirLogicalResult result, const char *what) {
    std::vector<std::string> diagnostics = context->take();
    if (mlirLogicalResultIsSuccess(result))
      return;
    std::string message;
    for (const std::string &d : diagnostics)
      message += (message.empty() ? "" : "\n") + d;
    throw CompileFailure(message.empty() ? std::string(what) + " failed" : message);
  }

  std::shared_ptr<Context> context;
  MlirModule module;
};

std::unique_ptr<Module> parse(const std::shared_ptr<Context> &context, MlirModule module) {
  std::vector<std::string> diagnostics = context->take();
  if (mlirModuleIsNull(module)) {
    std::string message;
    for (const std::string &d : diagnostics)
      message += (message.empty() ? "" : "\n") + d;
    throw CompileFailure(message.empty() ? "parse failed" : message);
  }
  return std::make_unique<Module>(context, module);
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "synplexum's native half: parse, compile and link over the C API";
  py::register_exception<CompileFailure>(m, "CompileError");

  py::class_<Context, std::shared_ptr<Context>>(m, "Context")
      .def(py::init<>())
      .def("parse_file",
           [](const std::shared_ptr<Context> &self, const std::string &path) {
             return parse(self, synplParseFile(self->get(), ref(path)));
           },
           py::arg("path"), "Parse and verify a .syn spec or an MLIR program")
      .def("parse_string",
           [](const std::shared_ptr<Context> &self, const std::string &text,
              const std::string &filename) {
             return parse(self, synplParseString(self->get(), ref(text), ref(filename)));
           },
           py::arg("text"), py::arg("filename") = "<string>.mlir",
           "Parse and verify text; the filename's extension picks the syntax")
      .def("take_warnings", [](Context &self) {
        std::vector<std::string> out;
        out.swap(self.warnings);
        return out;
      });

  py::class_<Module>(m, "Module")
      .def("__str__", &Module::str)
      .def_property_readonly("phase", &Module::phase, "The phase the program is at")
      .def("compile", &Module::compile, py::arg("to") = "llvm", py::arg("from_") = "",
           py::arg("target") = "auto", py::arg("cuda_arch") = "", py::arg("ptxas") = "",
           py::arg("system") = "", py::arg("l0_passes") = "",
           py::arg("progress") = std::function<void(std::string)>(),
           py::arg("kernel_cache") = false, py::arg("cache_dir") = "",
           py::arg("cpu") = "native", py::arg("opt_level") = 3, py::arg("search_cache") = false,
           "Run the phases in place, up to `to`; with kernel_cache, an executable's "
           "kernels compiled before come from the object cache (cache_dir, else "
           "$SYNPL_CACHE_DIR or ~/.cache/synpl) unlowered, and the module can only be "
           "written by write_executable for the same cpu and opt_level; with "
           "search_cache, an L3 program searched before (same program, options and "
           "compiler) takes the method chosen then from that folder, recording no "
           "search report")
      .def("ptx", &Module::ptx, "The PTX of the device kernels (after the device phase)")
      .def("write_object", &Module::writeObject, py::arg("path"), py::arg("cpu") = "native",
           py::arg("opt_level") = 3)
      .def("write_executable", &Module::writeExecutable, py::arg("path"),
           py::arg("cpu") = "native", py::arg("opt_level") = 3)
      .def_property_readonly("is_ipu21_program", &Module::isIPU21Program,
                             "whether the module ends in an ipu21 graph (the model placed "
                             "on an IPU, or target ipu21)")
      .def("write_ipu21_program", &Module::writeIPU21Program, py::arg("path"),
           "the ipu21 program file synpl-ipu21-sim trains");

  m.def("phases", [] {
    std::vector<std::string> names;
    for (int p = SynplPhaseL3; p <= SynplPhaseLLVM; ++p) {
      MlirStringRef n = synplPhaseGetName(static_cast<SynplPhase>(p));
      names.emplace_back(n.data, n.length);
    }
    return names;
  });
  m.def("search_reports_json", [] {
    std::string text;
    synplSearchReportsPrintJSON(appendTo, &text);
    return text;
  });
  m.def("clear_search_reports", [] { synplSearchReportsClear(); });
}
