// Writes tests/data/java-far-future-dates.tsv (read by tests/compat.rs):
// `javac -d /tmp FarFutureDates.java && java -cp /tmp FarFutureDates > java-far-future-dates.tsv`
import java.text.SimpleDateFormat;
import java.util.*;
import java.util.concurrent.TimeUnit;
public class FarFutureDates {
  public static void main(String[] a) {
    String[] zones = {"UTC","Asia/Shanghai","America/New_York","Europe/London","Australia/Sydney","Asia/Kolkata"};
    List<Long> secs = new ArrayList<>(Arrays.asList(253402207200L, 253402207201L, 253402300799L, 253402300800L, 946684800L + (1L<<41) - 1, (1L<<53) - 1));
    Random r = new Random(13);
    for (int i = 0; i < 60; i++) secs.add(253402207201L + (long)(r.nextDouble() * ((1L<<53) - 253402207201L)));
    for (int i = 0; i < 60; i++) secs.add(253402207201L + (long)(r.nextDouble() * 400L * 31556952L));
    System.out.println("# Rendered by OpenJDK " + System.getProperty("java.version") + " (java.text.SimpleDateFormat \"yyyy-MM-dd HH:mm:ss\" with setTimeZone,");
    System.out.println("# of new Date(TimeUnit.SECONDS.toMillis(second)), as UidGenerator's parseUID renders a timestamp)");
    System.out.println("# for seconds after jiff's range (year 9999), by tests/data/FarFutureDates.java; copied unchanged.");
    System.out.println("second\tzone\trendered");
    for (long s : secs) for (String z : zones) {
      SimpleDateFormat f = new SimpleDateFormat("yyyy-MM-dd HH:mm:ss");
      f.setTimeZone(TimeZone.getTimeZone(z));
      System.out.println(s + "\t" + z + "\t" + f.format(new Date(TimeUnit.SECONDS.toMillis(s))));
    }
  }
}
