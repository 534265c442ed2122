package sandbox

import (
	"fmt"
	"time"
)

// sprig's date functions format in the server's local time zone, which is
// part of its environment (TZ), and dateInZone reads the zone database from
// disk. These format in UTC; the zone functions accept "UTC" only.

func nowUTC() time.Time { return time.Now().UTC() }

// asTime reads a date as sprig does: a time, or seconds since the epoch;
// anything else is now.
func asTime(date any) time.Time {
	switch d := date.(type) {
	case time.Time:
		return d.UTC()
	case *time.Time:
		return d.UTC()
	case int64:
		return time.Unix(d, 0).UTC()
	case int:
		return time.Unix(int64(d), 0).UTC()
	case int32:
		return time.Unix(int64(d), 0).UTC()
	}
	return nowUTC()
}

func dateUTC(layout string, date any) string { return asTime(date).Format(layout) }

func htmlDateUTC(date any) string { return dateUTC("2006-01-02", date) }

func dateInZone(layout string, date any, zone string) (string, error) {
	if zone != "UTC" {
		return "", fmt.Errorf("time zone %q: templates have UTC only", zone)
	}
	return dateUTC(layout, date), nil
}

func htmlDateInZone(date any, zone string) (string, error) {
	return dateInZone("2006-01-02", date, zone)
}

func toDateUTC(layout, value string) time.Time {
	t, _ := time.ParseInLocation(layout, value, time.UTC)
	return t
}

func mustToDateUTC(layout, value string) (time.Time, error) {
	return time.ParseInLocation(layout, value, time.UTC)
}
