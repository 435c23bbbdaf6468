// The ocltune executable: the command line of cli/app.cpp.
#include "cli/commands.h"

int main(int argc, char** argv) { return ocltune::cli_main(argc, argv); }
