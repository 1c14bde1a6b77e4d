# Install tree with a CMake package: find_package(Synplexum) gives synpl::Synpl* targets.
include(CMakePackageConfigHelpers)
get_property(synpl_libs GLOBAL PROPERTY SYNPL_EXPORTED_LIBS)
install(TARGETS ${synpl_libs} EXPORT SynplexumTargets
        ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
install(DIRECTORY ${SYNPL_SOURCE_DIR}/include/synpl ${SYNPL_SOURCE_DIR}/include/synpl-c
        DESTINATION include)
install(EXPORT SynplexumTargets NAMESPACE synpl:: DESTINATION lib/cmake/synplexum)
configure_package_config_file(${SYNPL_SOURCE_DIR}/cmake/SynplexumConfig.cmake.in
  ${SYNPL_BINARY_DIR}/SynplexumConfig.cmake INSTALL_DESTINATION lib/cmake/synplexum)
write_basic_package_version_file(${SYNPL_BINARY_DIR}/SynplexumConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${SYNPL_BINARY_DIR}/SynplexumConfig.cmake
              ${SYNPL_BINARY_DIR}/SynplexumConfigVersion.cmake
        DESTINATION lib/cmake/synplexum)
