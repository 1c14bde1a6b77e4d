# Helpers shared by every synplexum library and dialect.
#
# All synplexum C++ links the monolithic libMLIR.so (target `MLIR`) and libLLVM.so:
# one shared copy of MLIR per process, and link steps that take seconds.

set_property(GLOBAL PROPERTY SYNPL_EXPORTED_LIBS "")

# synpl_add_library(<name> <sources>... [DEPENDS <targets>...] [LINK <libs>...])
# A static library of the project, exported for embedders as synpl::<name>.
function(synpl_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(synpl::${name} ALIAS ${name})
  target_link_libraries(${name} PUBLIC ${ARG_LINK} MLIR LLVM)
  target_compile_options(${name} PRIVATE -fno-exceptions)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${SYNPL_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${SYNPL_LINK_INCLUDE_DIR}>
    $<BUILD_INTERFACE:${SYNPL_GEN_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:include>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  set_property(GLOBAL APPEND PROPERTY SYNPL_EXPORTED_LIBS ${name})
endfunction()

# synpl_add_dialect_subdirectory(<dir> <CppDir>): adds dialects/<dir> with its
# binary dir at <build>/gen/synpl/Dialect/<CppDir>, where its .inc files belong.
macro(synpl_add_dialect_subdirectory dir cppdir)
  add_subdirectory(${dir} ${SYNPL_GEN_INCLUDE_DIR}/synpl/Dialect/${cppdir})
endmacro()

# synpl_add_dialect(<CppDir> <dialect-name> <sources>... [LINK <libs>...])
# Called from dialects/<dir>/CMakeLists.txt. Runs mlir-tblgen on <CppDir>Ops.td
# (which includes the dialect, type, attribute and enum definitions) into
# <build>/gen/synpl/Dialect/<CppDir>/, links the headers of this folder under
# <build>/include/synpl/Dialect/<CppDir>, builds library Synpl<CppDir> and the
# generated doc page docs/dialects/<dialect-name>.md.
function(synpl_add_dialect cppdir dialect)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
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

  synpl_add_library(Synpl${cppdir} ${ARG_UNPARSED_ARGUMENTS}
    DEPENDS Synpl${cppdir}IncGen
    LINK SynplSupport ${ARG_LINK})

  # docs/dialects/<dialect>.md is generated: `ninja synpl-docs` refreshes the
  # committed copy, and the `docs-fresh` test fails while it is stale.
  set_property(GLOBAL APPEND PROPERTY SYNPL_DIALECT_DOCS ${gendir}/${cppdir}Dialect.md:${dialect})

  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/ DESTINATION include/synpl/Dialect/${cppdir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
  install(DIRECTORY ${gendir}/ DESTINATION include/synpl/Dialect/${cppdir}
          FILES_MATCHING PATTERN "*.inc")
endfunction()
