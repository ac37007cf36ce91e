#include "app.h"

int main(int argc, char** argv) { return npucc::cli::run(argc, argv); }
