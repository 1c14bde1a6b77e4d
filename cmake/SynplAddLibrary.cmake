# Helpers shared by every synplexum library and dialect.
#
# Libraries are MLIR libraries (add_mlir_dialect_library,
# add_mlir_conversion_library, add_mlir_library) that name the MLIR component
# libraries they use (MLIRIR, MLIRPass, ...). SYNPL_LINK_MLIR_DYLIB (the
# default) links them all against the monolithic libMLIR.so instead: one
# shared copy of MLIR per process and link steps of seconds. Turn it off to
# link MLIR statically, as a compiler that embeds synplexum and links MLIR
# statically itself (IREE, CIRCT, Triton) does. LLVM itself is the shared
# libLLVM.so either way (the Debian packages' MLIR libraries link it).

option(SYNPL_LINK_MLIR_DYLIB "Link libMLIR.so instead of MLIR's component libraries" ON)
set(MLIR_LINK_MLIR_DYLIB ${SYNPL_LINK_MLIR_DYLIB})

set_property(GLOBAL PROPERTY SYNPL_EXPORTED_LIBS "")

# synpl_add_library(<name> [DIALECT | CONVERSION] <sources>...
#                   [DEPENDS <targets>...] [LINK_LIBS <synpl libraries>...]
#                   [MLIR_LIBS <MLIR component libraries>...]
#                   [LINK_COMPONENTS <LLVM components>...])
# A static library of the project, exported for embedders as synpl::<name>.
# DIALECT and CONVERSION pick add_mlir_dialect_library and
# add_mlir_conversion_library (MLIR's registries of such libraries);
# installation is the project's own (cmake/SynplInstall.cmake).
function(synpl_add_library name)
  cmake_parse_arguments(ARG "DIALECT;CONVERSION" ""
    "DEPENDS;LINK_LIBS;MLIR_LIBS;LINK_COMPONENTS" ${ARGN})
  set(add add_mlir_library)
  if(ARG_DIALECT)
    set(add add_mlir_dialect_library)
  elseif(ARG_CONVERSION)
    set(add add_mlir_conversion_library)
  endif()
  cmake_language(CALL ${add} ${name} ${ARG_UNPARSED_ARGUMENTS}
    EXCLUDE_FROM_LIBMLIR DISABLE_INSTALL
    DEPENDS ${ARG_DEPENDS}
    LINK_COMPONENTS ${ARG_LINK_COMPONENTS}
    LINK_LIBS PUBLIC ${ARG_LINK_LIBS})
  mlir_target_link_libraries(${name} PUBLIC ${ARG_MLIR_LIBS})
  add_library(synpl::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${SYNPL_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${SYNPL_LINK_INCLUDE_DIR}>
    $<BUILD_INTERFACE:${SYNPL_GEN_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:include>)
  set_property(GLOBAL APPEND PROPERTY SYNPL_EXPORTED_LIBS ${name})
endfunction()

# synpl_add_dialect_subdirectory(<dir> <CppDir>): adds dialects/<dir> with its
# binary dir at <build>/gen/synpl/Dialect/<CppDir>, where its .inc files belong.
macro(synpl_add_dialect_subdirectory dir cppdir)
  add_subdirectory(${dir} ${SYNPL_GEN_INCLUDE_DIR}/synpl/Dialect/${cppdir})
endmacro()

# synpl_add_dialect(<CppDir> <dialect-name> <sources>... [LINK_LIBS <libs>...]
#                   [MLIR_LIBS <MLIR component libraries>...])
# Called from dialects/<dir>/CMakeLists.txt. Runs mlir-tblgen on <CppDir>Ops.td
# (which includes the dialect, type, attribute and enum definitions) into
# <build>/gen/synpl/Dialect/<CppDir>/, links the headers of this folder under
# <build>/include/synpl/Dialect/<CppDir>, builds the dialect library
# Synpl<CppDir> and the generated doc page docs/dialects/<dialect-name>.md.
function(synpl_add_dialect cppdir dialect)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS;MLIR_LIBS" ${ARGN})
  # dialects/CMakeLists.txt adds this folder with its binary dir set to gendir.
  set(gendir ${SYNPL_GEN_INCLUDE_DIR}/synpl/Dialect/${cppdir})
  if(NOT CMAKE_CURRENT_BINARY_DIR STREQUAL gendir)
    message(FATAL_ERROR "add dialect ${dialect} with synpl_add_dialect_subdirectory()")
  endif()
  file(MAKE_DIRECTORY ${SYNPL_LINK_INCLUDE_DIR}/synpl/Dialect)
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}
       ${SYNPL_LINK_INCLUDE_DIR}/synpl/Dialect/${cppdir} SYMBOLIC)

  set(LLVM_TARGET_DEFINITIONS ${cppdir}Ops.td)
  mlir_tablegen(${cppdir}Dialect.h.inc -gen-dialect-decls -dialect=${dialect})
  mlir_tablegen(${cppdir}Dialect.cpp.inc -gen-dialect-defs -dialect=${dialect})
  mlir_tablegen(${cppdir}Ops.h.inc -gen-op-decls)
  mlir_tablegen(${cppdir}Ops.cpp.inc -gen-op-defs)
  mlir_tablegen(${cppdir}Types.h.inc -gen-typedef-decls -typedefs-dialect=${dialect})
  mlir_tablegen(${cppdir}Types.cpp.inc -gen-typedef-defs -typedefs-dialect=${dialect})
  mlir_tablegen(${cppdir}Attrs.h.inc -gen-attrdef-decls -attrdefs-dialect=${dialect})
  mlir_tablegen(${cppdir}Attrs.cpp.inc -gen-attrdef-defs -attrdefs-dialect=${dialect})
  mlir_tablegen(${cppdir}Enums.h.inc -gen-enum-decls)
  mlir_tablegen(${cppdir}Enums.cpp.inc -gen-enum-defs)
  mlir_tablegen(${cppdir}Dialect.md -gen-dialect-doc -dialect=${dialect})
  add_public_tablegen_target(Synpl${cppdir}IncGen)

  synpl_add_library(Synpl${cppdir} DIALECT ${ARG_UNPARSED_ARGUMENTS}
    DEPENDS Synpl${cppdir}IncGen
    LINK_LIBS SynplSupport ${ARG_LINK_LIBS}
    MLIR_LIBS MLIRIR MLIRBytecodeOpInterface ${ARG_MLIR_LIBS})

  # docs/dialects/<dialect>.md is generated: `ninja synpl-docs` refreshes the
  # committed copy, and the `docs-fresh` test fails while it is stale.
  set_property(GLOBAL APPEND PROPERTY SYNPL_DIALECT_DOCS ${gendir}/${cppdir}Dialect.md:${dialect})

  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION include/synpl/Dialect/${cppdir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
  install(DIRECTORY ${gendir}/ DESTINATION include/synpl/Dialect/${cppdir}
          FILES_MATCHING PATTERN "*.inc")
endfunction()
