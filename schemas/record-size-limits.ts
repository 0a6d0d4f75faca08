/**
 * How large a record may be, end to end. Kafka refuses a record batch over a topic's
 * `max.message.bytes` (by default the broker's `message.max.bytes`, about 1 MiB) with
 * MESSAGE_TOO_LARGE, and no retry will ever change that; so the product sets the limit on its
 * topics itself, bounds what intake accepts so the largest stage output fits, and dead-letters as
 * `record_too_large` the rare record that still does not (streams/kafka/kafka-sink).
 *
 * The largest output is markup's MarkedArticle, which carries the article's text twice (the text and
 * the marked text, `&`, `<`, `>` escaped and every mention wrapped in `<e>…</e>`), plus each
 * mention's surface and entity id, and the sentences and dates. For ordinary prose that is about
 * 2.2 times the text's UTF-8 bytes plus some 40 bytes per mention; at most 256 KiB of text (the
 * intake bound: 85,000 characters of Cyrillic, Greek or CJK, 256,000 of Latin script), that stays
 * well under 1 MiB. Escapes could make a text of nothing but `&` grow fivefold: such an article is
 * dead-lettered at markup rather than allowed to wedge the stage.
 */

/** `max.message.bytes` of every product topic (the dead-letter topic has a little more, below). */
export const TOPIC_MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * The dead-letter topic carries an input record (at most TOPIC_MAX_MESSAGE_BYTES, it came from a
 * product topic) plus the dead-letter headers (reason, origin, a message cut to 1,000 characters).
 */
export const DEAD_LETTER_MAX_MESSAGE_BYTES = TOPIC_MAX_MESSAGE_BYTES + 64 * 1024;

/** Article text intake accepts, in UTF-8 bytes (next to its bound in characters). */
export const MAX_ARTICLE_TEXT_BYTES = 256 * 1024;
