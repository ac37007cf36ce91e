#pragma once

// Named points in the long commands where a test can stop npucc and interrupt it there:
// signal and race tests wait for a state they can observe instead of guessing a delay.
//
// NPUCC_TEST_STOP_AT=NAME stops the process at the first point called NAME (a NAME ending
// in '*' matches any point that starts with the rest); NPUCC_TEST_STOP_AT=N (a number)
// stops it at the Nth point it reaches. Stopping creates NPUCC_TEST_STOP_NOTE (required;
// with O_EXCL, so of several processes sharing the variables only the first one stops),
// writes "NAME PID\n" into it and waits until a signal arrives; a signal held by
// util::DeferInterrupts makes it return so that the deferral ends and acts on it.
// NPUCC_TEST_TRACE=FILE appends the name of every point reached to FILE, one a line, and
// stops nowhere: a test learns from one run which points there are.
// Unset (every real run), a point costs one atomic load.
namespace npucc::util {

void test_point(const char* name);

// Reads the two variables again (they are read once, at the first point): for a forked
// child that set them itself (the unit tests).
void reread_test_point_rule();

} // namespace npucc::util
