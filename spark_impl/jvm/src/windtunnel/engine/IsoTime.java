package windtunnel.engine;

import java.nio.charset.StandardCharsets;

/**
 * Python 3.11's {@code datetime.fromisoformat} (its C implementation, which works on the UTF-8
 * bytes of the text) followed by {@code timeparse._aware_ms}: epoch milliseconds of an
 * ISO-8601 text, floored. {@link #epochMs} raises {@link Times.NotATime} with the oracle's
 * message: "the string is not an ISO-8601 timestamp" for anything fromisoformat refuses,
 * "the timestamp has no time zone ..." for a naive one.
 */
final class IsoTime {
    static final String NOT_ISO = "the string is not an ISO-8601 timestamp";
    static final String NAIVE = "the timestamp has no time zone (add Z or an offset such as +02:00)";
    private static final long EPOCH_ORDINAL = 719163; // date(1970, 1, 1).toordinal()
    private static final int[] DAYS_IN_MONTH = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    private static final int[] DAYS_BEFORE_MONTH = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    private static final int[] CORRECTION = {100000, 10000, 1000, 100, 10};

    private final byte[] s; // the UTF-8 bytes, NUL-padded: the C code reads its terminator
    private final int len;
    private int year;
    private int month;
    private int day;
    private int hour;
    private int minute;
    private int second;
    private int micro;
    private int tzOffset;
    private int tzMicro;

    private IsoTime(byte[] bytes) {
        this.len = bytes.length;
        this.s = new byte[len + 16];
        System.arraycopy(bytes, 0, s, 0, len);
    }

    /** Epoch ms of {@code text} as {@code timestamp_ms} reads a string. */
    static long epochMs(String text) {
        String cleaned = strip(text).replace('z', 'Z');
        byte[] bytes = sanitize(cleaned);
        if (bytes == null) {
            throw new Times.NotATime(NOT_ISO);
        }
        IsoTime parsed = new IsoTime(bytes);
        int rv = parsed.parse();
        if (rv < 0 || !parsed.valid(rv)) {
            throw new Times.NotATime(NOT_ISO);
        }
        if (rv != 1) {
            throw new Times.NotATime(NAIVE);
        }
        long ordinal = ordinal(parsed.year, parsed.month, parsed.day);
        long localMicros = (ordinal - EPOCH_ORDINAL) * 86_400_000_000L
                + ((parsed.hour * 3600L + parsed.minute * 60L + parsed.second) * 1_000_000L + parsed.micro);
        long offsetMicros = parsed.tzOffset == 0 ? 0 : parsed.tzOffset * 1_000_000L + parsed.tzMicro;
        return Math.floorDiv(localMicros - offsetMicros, 1000L);
    }

    /** Python's {@code str.strip()}: Unicode whitespace at both ends. */
    static String strip(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.charAt(start))) {
            start++;
        }
        while (end > start && isSpace(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    private static boolean isSpace(char c) {
        return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0
                || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029
                || c == 0x202f || c == 0x205f || c == 0x3000;
    }

    /** {@code _sanitize_isoformat_str} and the UTF-8 encoding: null when refused. */
    private static byte[] sanitize(String text) {
        int[] points = text.codePoints().toArray();
        if (points.length < 7) {
            return null;
        }
        for (int pos : new int[] {7, 8, 10}) {
            if (pos > points.length) {
                break;
            }
            if (pos < points.length && points[pos] >= 0xd800 && points[pos] <= 0xdfff) {
                points[pos] = 'T';
                break;
            }
        }
        for (int p : points) {
            if (p >= 0xd800 && p <= 0xdfff) {
                return null; // UnicodeEncodeError
            }
        }
        return new String(points, 0, points.length).getBytes(StandardCharsets.UTF_8);
    }

    private int at(int i) {
        return i < 0 ? -1 : s[i] & 0xff;
    }

    private static boolean digit(int c) {
        return c >= '0' && c <= '9';
    }

    /** 0 (naive), 1 (with offset) or negative (refused), as datetime_fromisoformat. */
    private int parse() {
        int sep = separator();
        if (sep < 0) {
            return -1;
        }
        int rv = date(sep);
        if (rv == 0 && len > sep) {
            int p = sep;
            int lead = at(p);
            if ((lead & 0x80) == 0) {
                p += 1;
            } else if ((lead & 0xf0) == 0xe0) {
                p += 3;
            } else if ((lead & 0xf0) == 0xf0) {
                p += 4;
            } else {
                p += 2;
            }
            rv = time(p, len);
        }
        return rv;
    }

    private int separator() {
        if (len == 7) {
            return 7;
        }
        if (at(4) == '-') {
            if (at(5) == 'W') {
                if (len > 8 && at(8) == '-') {
                    if (len == 9) {
                        return -1;
                    }
                    if (len > 10 && digit(at(10))) {
                        return 8;
                    }
                    return 10;
                }
                return 8;
            }
            return 10;
        }
        if (at(4) == 'W') {
            int idx = 7;
            while (idx < len && digit(at(idx))) {
                idx++;
            }
            if (idx < 9) {
                return idx;
            }
            return idx % 2 == 0 ? 7 : 8;
        }
        return 8;
    }

    private int[] digits = new int[1];

    /** parse_digits: the position after {@code n} digits from {@code p} into digits[0], or -1. */
    private int digits(int p, int n) {
        int value = 0;
        for (int i = 0; i < n; i++) {
            int c = at(p++);
            if (!digit(c)) {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        digits[0] = value;
        return p;
    }

    private int date(int limit) {
        int p = digits(0, 4);
        if (p < 0) {
            return -1;
        }
        year = digits[0];
        boolean dashes = at(p) == '-';
        if (dashes) {
            p++;
        }
        if (at(p) == 'W') {
            p = digits(p + 1, 2);
            if (p < 0) {
                return -3;
            }
            int week = digits[0];
            int isoDay;
            if (p < limit) {
                if (dashes && at(p++) != '-') {
                    return -2;
                }
                p = digits(p, 1);
                if (p < 0) {
                    return -4;
                }
                isoDay = digits[0];
            } else {
                isoDay = 1;
            }
            return isoToYmd(year, week, isoDay);
        }
        p = digits(p, 2);
        if (p < 0) {
            return -1;
        }
        month = digits[0];
        if (dashes && at(p++) != '-') {
            return -2;
        }
        p = digits(p, 2);
        if (p < 0) {
            return -1;
        }
        day = digits[0];
        return 0;
    }

    private int isoToYmd(int isoYear, int week, int isoDay) {
        if (isoYear < 1 || isoYear > 9999) {
            return -4;
        }
        if (week <= 0 || week >= 53) {
            boolean outOfRange = true;
            if (week == 53) {
                int firstWeekday = (int) ((ordinal(isoYear, 1, 1) + 6) % 7);
                if (firstWeekday == 3 || (firstWeekday == 2 && leap(isoYear))) {
                    outOfRange = false;
                }
            }
            if (outOfRange) {
                return -5;
            }
        }
        if (isoDay <= 0 || isoDay >= 8) {
            return -6;
        }
        long firstDay = ordinal(isoYear, 1, 1);
        long firstWeekday = (firstDay + 6) % 7;
        long monday = firstDay - firstWeekday;
        if (firstWeekday > 3) {
            monday += 7;
        }
        fromOrdinal(monday + (week - 1) * 7L + isoDay - 1);
        return 0;
    }

    /** parse_hh_mm_ss_ff into out[0..3]: 0 at the end of the text, 1 with more, negative refused. */
    private int hhmmss(int p, int end, int[] out) {
        out[0] = 0;
        out[1] = 0;
        out[2] = 0;
        out[3] = 0;
        boolean separator = true;
        for (int i = 0; i < 3; i++) {
            p = digits(p, 2);
            if (p < 0) {
                return -3;
            }
            out[i] = digits[0];
            int c = at(p++);
            if (i == 0) {
                separator = c == ':';
            }
            if (p >= end) {
                return c != 0 ? 1 : 0;
            } else if (separator && c == ':') {
                continue;
            } else if (c == '.' || c == ',') {
                break;
            } else if (!separator) {
                --p;
            } else {
                return -4;
            }
        }
        int remains = end - p;
        int toParse = Math.min(remains, 6);
        p = digits(p, toParse);
        if (p < 0) {
            return -3;
        }
        out[3] = digits[0];
        if (toParse < 6) {
            out[3] *= CORRECTION[toParse - 1];
        }
        while (digit(at(p))) {
            ++p;
        }
        return at(p) != 0 ? 1 : 0;
    }

    private int time(int start, int end) {
        int tz = start;
        do {
            int c = at(tz);
            if (c == 'Z' || c == '+' || c == '-') {
                break;
            }
        } while (++tz < end);
        int[] parts = new int[4];
        int rv = hhmmss(start, tz, parts);
        hour = parts[0];
        minute = parts[1];
        second = parts[2];
        micro = parts[3];
        if (rv < 0) {
            return rv;
        } else if (tz == end) {
            return rv == 1 ? -5 : 0;
        }
        if (at(tz) == 'Z') {
            tzOffset = 0;
            tzMicro = 0;
            return at(tz + 1) != 0 ? -5 : 1;
        }
        int sign = at(tz) == '-' ? -1 : 1;
        rv = hhmmss(tz + 1, end, parts);
        tzOffset = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
        tzMicro = sign * parts[3];
        return rv != 0 ? -5 : 1;
    }

    /** The checks of the timezone and datetime constructors. */
    private boolean valid(int rv) {
        if (rv == 1 && tzOffset != 0) {
            long total = tzOffset * 1_000_000L + tzMicro;
            if (total <= -86_400_000_000L || total >= 86_400_000_000L) {
                return false;
            }
        }
        if (year < 1 || year > 9999 || month < 1 || month > 12) {
            return false;
        }
        int days = month == 2 && leap(year) ? 29 : DAYS_IN_MONTH[month];
        return day >= 1 && day <= days && hour <= 23 && minute <= 59 && second <= 59;
    }

    private static boolean leap(int y) {
        return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    }

    /** Proleptic Gregorian ordinal, 0001-01-01 = 1. */
    static long ordinal(int y, int m, int d) {
        long prior = y - 1;
        long days = prior * 365 + prior / 4 - prior / 100 + prior / 400;
        int before = DAYS_BEFORE_MONTH[m] + (m > 2 && leap(y) ? 1 : 0);
        return days + before + d;
    }

    private void fromOrdinal(long ordinal) {
        long n = ordinal - 1;
        long n400 = n / 146097;
        n %= 146097;
        long n100 = n / 36524;
        n %= 36524;
        long n4 = n / 1461;
        n %= 1461;
        long n1 = n / 365;
        n %= 365;
        long y = n400 * 400 + 1 + n100 * 100 + n4 * 4 + n1;
        if (n1 == 4 || n100 == 4) {
            year = (int) (y - 1);
            month = 12;
            day = 31;
            return;
        }
        year = (int) y;
        boolean isLeap = leap(year);
        int m = (int) ((n + 50) >> 5);
        int preceding = DAYS_BEFORE_MONTH[m] + (m > 2 && isLeap ? 1 : 0);
        if (preceding > n) {
            m -= 1;
            preceding -= DAYS_IN_MONTH[m] + (m == 2 && isLeap ? 1 : 0);
        }
        month = m;
        day = (int) (n - preceding + 1);
    }
}
