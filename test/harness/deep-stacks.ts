/**
 * Keeps fifty frames in every stack: kafkajs's retriers are ten frames deep before they reach the
 * caller, so with the default limit an unhandled rejection from a client nobody awaited would not
 * say whose client it was.
 */
Error.stackTraceLimit = 50;
