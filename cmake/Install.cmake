# Install rules a distribution needs: libocltune.so with its public headers and a CMake package
# (find_package(ocltune) gives the target ocltune::ocltune), the executables (cli/, bench/) and the
# system database (db/). tests/consumer builds a project against such a prefix.
include(CMakePackageConfigHelpers)

# A wheel (pyproject.toml) holds no symlinks, so there the library is one file under its soname
# rather than three copies (libocltune.so, .so.0, .so.0.1.0).
set(ocltune_namelink)
if(SKBUILD)
  set_target_properties(ocltune_shared PROPERTIES VERSION 0)
  set(ocltune_namelink NAMELINK_SKIP)
endif()
install(TARGETS ocltune_shared EXPORT ocltuneTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ${ocltune_namelink}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ocltune DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(OCLTUNE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ocltune)
install(EXPORT ocltuneTargets NAMESPACE ocltune:: DESTINATION ${OCLTUNE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ocltuneConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ocltuneConfig.cmake INSTALL_DESTINATION ${OCLTUNE_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ocltuneConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ocltuneConfig.cmake ${PROJECT_BINARY_DIR}/ocltuneConfigVersion.cmake
        DESTINATION ${OCLTUNE_CMAKE_DIR})
