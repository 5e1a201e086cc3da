import java.io.InputStream;
import java.lang.reflect.Field;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.FileHandler;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import com.google.api.client.http.HttpTransport;
import com.smsfactor.SMSFactor;
import com.smsfactor.exception.SMSFactorException;
import com.smsfactor.model.Account;
import com.smsfactor.model.Campaign;
import com.smsfactor.model.ContactList;
import com.smsfactor.model.Invoice;
import com.smsfactor.model.Message;
import com.smsfactor.model.Notification;
import com.smsfactor.model.Token;
import com.smsfactor.model.Webhook;
import com.smsfactor.response.*;

/**
 * Drives the unmodified SMSFactor Java SDK against a running Pigeon.
 * Usage: java -cp ... SdkCheck BASE_URL TOKEN [TRACE_FILE]
 * The SDK's base URL is a private static constant (SMSFactor.apiBase, no setter): it is set by reflection.
 */
public class SdkCheck {
    interface Call<T> { T run() throws Exception; }
    interface Check<T> { String problem(T r) throws Exception; }

    static final Logger trace = Logger.getLogger(HttpTransport.class.getName());
    static int passed = 0, failed = 0;
    static final List<String> failures = new ArrayList<>();

    static <T> T check(String name, Call<T> call, Check<T> ok) {
        trace.config("===== " + name);
        try {
            T r = call.run();
            String problem = ok == null ? null : ok.problem(r);
            String body = (r instanceof SMSFactorResponse) ? ((SMSFactorResponse) r).getBody() : String.valueOf(r);
            if (problem == null) {
                passed++;
                System.out.println("PASS " + name + "  " + abbreviate(body));
            } else {
                failed++;
                failures.add(name);
                System.out.println("FAIL " + name + ": " + problem + "\n     body: " + abbreviate(body));
            }
            return r;
        } catch (SMSFactorException e) {
            failed++;
            failures.add(name);
            System.out.println("FAIL " + name + ": " + e.getClass().getSimpleName() + " code=" + e.getSMSFactorCode()
                    + " http=" + e.getHttpStatusCode() + " msg=" + e.getMessage() + "\n     body: " + abbreviate(e.getHttpBody()));
        } catch (Throwable e) {
            failed++;
            failures.add(name);
            System.out.println("FAIL " + name + ": " + e.getClass().getName() + ": " + e.getMessage());
        }
        return null;
    }

    /** A call that must raise the given SDK exception with the given SMSFactor code. */
    static void expectError(String name, Call<?> call, Class<?> type, int code) {
        trace.config("===== " + name);
        try {
            Object r = call.run();
            failed++;
            failures.add(name);
            String body = (r instanceof SMSFactorResponse) ? ((SMSFactorResponse) r).getBody() : String.valueOf(r);
            System.out.println("FAIL " + name + ": no exception\n     body: " + abbreviate(body));
        } catch (SMSFactorException e) {
            boolean good = type.isInstance(e) && e.getSMSFactorCode() != null && e.getSMSFactorCode() == code;
            if (good) passed++; else { failed++; failures.add(name); }
            System.out.println((good ? "PASS " : "FAIL ") + name + ": " + e.getClass().getSimpleName() + " code="
                    + e.getSMSFactorCode() + " http=" + e.getHttpStatusCode() + " msg=" + e.getMessage()
                    + (good ? "" : "\n     body: " + abbreviate(e.getHttpBody())));
        } catch (Throwable e) {
            failed++;
            failures.add(name);
            System.out.println("FAIL " + name + ": " + e.getClass().getName() + ": " + e.getMessage());
        }
    }

    static String abbreviate(String s) {
        if (s == null) return "null";
        s = s.replace('\n', ' ');
        return s.length() > 400 ? s.substring(0, 400) + "…" : s;
    }

    static String need(boolean cond, String what) { return cond ? null : what; }

    static long seq = System.currentTimeMillis() % 10000000L * 10;
    /** A fresh French mobile number, so that a second run on the same database adds new numbers. */
    static String uniq() { return String.format("3361%07d", (seq++) % 10000000L); }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
        return m;
    }

    static List<Object> gsm(String... numbers) {
        List<Object> l = new ArrayList<>();
        for (String n : numbers) l.add(map("value", n));
        return l;
    }

    public static void main(String[] args) throws Exception {
        String base = args[0];
        String token = args[1];
        String traceFile = args.length > 2 ? args[2] : "trace.log";

        // HTTP trace of every request and answer (google-http-client's own logging).
        FileHandler fh = new FileHandler(traceFile);
        fh.setFormatter(new SimpleFormatter());
        fh.setLevel(Level.ALL);
        trace.addHandler(fh);
        trace.setLevel(Level.ALL);
        trace.setUseParentHandlers(false);

        // The base URL: SMSFactor.apiBase is `private static String` with no setter.
        Field f = SMSFactor.class.getDeclaredField("apiBase");
        f.setAccessible(true);
        f.set(null, base);
        SMSFactor.apiToken = token;
        System.out.println("SDK base URL set by reflection to " + SMSFactor.getApiBase());

        // ---------- account ----------
        check("Account.credits", Account::credits, r -> need(r.status == 1 && r.credits != null && r.credits > 0, "credits missing"));
        check("Account.get", Account::get, r -> need(r.account != null && "sdk@example.com".equals(r.account.email), "account.email"));
        Map<String, Object> user = map("firstname", "George", "lastname", "Abitbol", "city", "Pluvigner", "phone", "0011223344",
                "address1", "3 avenue du president Coty", "zip", "56330", "country_code", "fr", "isChild", "0", "unlimited", "0",
                "email", "g.abitbol+" + System.nanoTime() + "@example.com", "password", "edR3meDeDn0m");
        // A top-level account (isChild 0) is the operator's to create: Pigeon refuses it with -7 on purpose.
        expectError("Account.create (README params, isChild 0) -> InvalidRequestException -7", () -> Account.create(map("account", user)),
                com.smsfactor.exception.InvalidRequestException.class, -7);
        Map<String, Object> child = new HashMap<>(user);
        child.put("isChild", "1");
        child.put("email", "child+" + System.nanoTime() + "@example.com");
        check("Account.create (isChild 1)", () -> Account.create(map("account", child)), r -> need(r.status == 1 && r.id != null, "id missing"));
        check("Account.subAccounts", Account::subAccounts, r -> need(r.subAccounts != null && !r.subAccounts.isEmpty(), "sub-accounts empty"));
        check("Account.retention", Account::retention, r -> need(r.data_retention != null && r.data_retention.message != null, "data_retention"));
        check("Account.update (retention)", () -> Account.update(map("retention", map("message", "6m", "list", "-1", "campaign", "-1", "survey", "-1"))),
                r -> need(r.retention != null && "6m".equals(r.retention.message), "retention.message != 6m"));

        // ---------- tokens ----------
        TokenCreateResponse tc = check("Token.create", () -> Token.create(map("token", map("name", "token sdk"))),
                r -> need(r.token != null && r.token_id != null, "token/token_id"));
        check("Token.all", Token::all, r -> need(r.tokens != null && r.tokens.size() >= 2 && r.tokens.get(0).api_token_id != null
                && r.tokens.get(0).created_at != null, "tokens/api_token_id/created_at"));
        if (tc != null && tc.token_id != null)
            check("Token.delete", () -> Token.delete(tc.token_id), r -> need(tc.token_id.equals(r.deleted_token), "deleted_token"));

        // ---------- single message (GET /send) ----------
        check("Message.send simulate (GET /send/simulate)", () -> Message.send(map("text", "Hello from the Java SDK", "to", "33612345678", "sender", "SDK"), true),
                r -> need(r.status == 1 && r.cost != null && r.total != null, "cost/total"));
        MessageSendResponse ms = check("Message.send (GET /send)", () -> Message.send(map("text", "Hello from the Java SDK", "to", "33612345678", "sender", "SDK", "gsmsmsid", "java-1")),
                r -> need(r.status == 1 && r.ticket != null && r.sent != null && r.sent == 1, "ticket/sent"));
        check("Message.send with <-short-> and links=URL (GET /send)", () -> Message.send(map("text", "Track: <-short->", "to", "33612345679",
                "links", "https://example.com/a")), r -> need(r.status == 1 && r.ticket != null, "ticket"));

        // ---------- campaign (POST /send) ----------
        Map<String, Object> message = map("text", "Your order shipped: <-short-> and <-short->", "pushtype", "alert", "sender", "SDK",
                "links", List.of("https://example.com/orders/42", "https://example.com/help"));
        List<Object> rec = new ArrayList<>();
        rec.add(map("gsmsmsid", "100", "value", "33612340001"));
        rec.add(map("value", "33612340002"));
        rec.add(map("value", "33612340002"));
        rec.add(map("value", "12"));
        Map<String, Object> payload = map("sms", map("message", message, "recipients", map("gsm", rec)));
        check("Campaign.send simulate (POST /send/simulate)", () -> Campaign.send(payload, true),
                r -> need(r.status == 1 && r.total != null && r.total == 4 && r.duplicated == 1 && r.invalid == 1, "counts"));
        CampaignSendResponse cs = check("Campaign.send (POST /send, 2 <-short-> links)", () -> Campaign.send(payload, false),
                r -> need(r.status == 1 && r.ticket != null && r.sent == 2 && r.cost != null, "ticket/sent"));

        String delay = LocalDateTime.now(ZoneId.of("Europe/Paris")).plusDays(2).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
        Map<String, Object> later = map("sms", map("message", map("text", "Later", "pushtype", "alert", "sender", "SDK", "delay", delay),
                "recipients", map("gsm", gsm("33612340003"))));
        CampaignSendResponse cl = check("Campaign.send delayed (POST /send, delay)", () -> Campaign.send(later, false),
                r -> need(r.status == 1 && r.ticket != null, "ticket"));

        Thread.sleep(2500); // let the simulator deliver
        if (cs != null && cs.ticket != null) {
            Integer t = Integer.valueOf(cs.ticket);
            check("Campaign.get", () -> Campaign.get(t), r -> need(r.campaign != null && !r.campaign.isEmpty()
                    && r.campaign.get(0).date != null && r.campaign.get(0).id != null, "campaign[0].id/date"));
            check("Campaign.npaiToBlacklist (PUT /campaign/:id/npai)", () -> Campaign.npaiToBlacklist(t), r -> need(r.status == 1, "status"));
        }
        if (cl != null && cl.ticket != null) {
            Integer t = Integer.valueOf(cl.ticket);
            check("Campaign.cancel (DELETE /send/:ticket)", () -> Campaign.cancel(t), r -> need(r.status == 1, "status"));
        }
        if (ms != null && ms.ticket != null)
            check("Campaign.get (ticket of Message.send)", () -> Campaign.get(ms.ticket), r -> need(r.campaign != null && !r.campaign.isEmpty(), "campaign"));
        check("Campaign.history()", () -> Campaign.history(), r -> need(r.campaigns != null && r.campaigns.size() >= 3
                && r.totalRecords != null && r.campaigns.get(0).date != null, "campaigns/totalRecords/date"));
        check("Campaign.history(length=1)", () -> Campaign.history(map("length", 1)), r -> need(r.campaigns != null && r.campaigns.size() == 1, "one campaign"));

        // ---------- lists ----------
        List<Object> c1 = new ArrayList<>();
        c1.add(map("value", "33600000001", "info1", "contact 1"));
        c1.add(map("value", "33600000002", "info1", "contact 2"));
        ContactListCreateResponse lc = check("ContactList.create", () -> ContactList.create(map("list", map("name", "sdk list", "contacts", map("gsm", c1)))),
                r -> need(r.status == 1 && r.id != null && r.contacts == 2, "id/contacts"));
        if (lc != null && lc.id != null) {
            Integer listId = lc.id;
            List<Object> c2 = new ArrayList<>();
            c2.add(map("value", "33600000003", "info1", "contact 3"));
            c2.add(map("value", "33600000001", "info1", "contact 1 again"));
            // Exactly the SDK README's / test's shape: the list id under "list".
            check("ContactList.addContacts (SDK README shape: list.list = id)", () -> ContactList.addContacts(map("list", map("list", listId, "contacts", map("gsm", c2)))),
                    r -> need(r.status == 1 && listId.equals(r.id), "answered list id " + r.id + ", expected the existing list " + listId));
            List<Object> c3 = new ArrayList<>();
            c3.add(map("value", "33600000004"));
            check("ContactList.addContacts (SMSFactor docs shape: list.listId = id)", () -> ContactList.addContacts(map("list", map("listId", listId, "contacts", map("gsm", c3)))),
                    r -> need(r.status == 1 && listId.equals(r.id), "answered list id " + r.id + ", expected " + listId));
            ContactListGetResponse lg = check("ContactList.get", () -> ContactList.get(listId),
                    r -> need(r.list != null && !r.list.isEmpty() && r.list.get(0).id != null && r.list.get(0).destination != null, "list contacts"));
            check("ContactList.all", ContactList::all, r -> need(r.lists != null && !r.lists.isEmpty() && r.lists.get(0).date != null, "lists"));
            check("ContactList.deduplicate", () -> ContactList.deduplicate(listId), r -> need(r.status == 1 && r.removed != null, "removed"));
            if (lg != null && lg.list != null && !lg.list.isEmpty()) {
                String contactId = lg.list.get(lg.list.size() - 1).id;
                check("ContactList.removeContact", () -> ContactList.removeContact(contactId), r -> need(r.status == 1, "status"));
            }
            check("ContactList.npaiClear (PUT /list/:id/npai/clear)", () -> ContactList.npaiClear(listId), r -> need(r.status == 1 && r.removed != null, "removed"));
            Map<String, Object> lp = map("sms", map("message", map("text", "Hello [info1] <-short->", "pushtype", "alert", "sender", "SDK",
                    "links", List.of("https://example.com/l")), "lists", List.of(map("value", listId.toString()))));
            check("Campaign.sendToLists simulate", () -> Campaign.sendToLists(lp, true), r -> need(r.status == 1 && r.total != null && r.total > 0, "total"));
            check("Campaign.sendToLists", () -> Campaign.sendToLists(lp, false), r -> need(r.status == 1 && r.ticket != null, "ticket"));
            check("ContactList.delete", () -> ContactList.delete(listId), r -> need(r.status == 1, "status"));
        }

        // ---------- blacklist / npai ----------
        check("ContactList.addToBlacklist", () -> ContactList.addToBlacklist(map("blacklist", map("contacts", map("gsm", gsm(uniq(), uniq()))))),
                r -> need(r.status == 1 && r.added_contacts != null && r.added_contacts == 2, "added_contacts"));
        check("ContactList.blacklist", ContactList::blacklist, r -> need(r.list != null && r.list.size() >= 2 && r.totalRecords != null, "list"));
        check("ContactList.addToNpai", () -> ContactList.addToNpai(map("npai", map("contacts", map("gsm", gsm(uniq(), uniq()))))),
                r -> need(r.status == 1 && r.added_contacts != null && r.added_contacts == 2, "added_contacts"));
        check("ContactList.npai", ContactList::npai, r -> need(r.list != null && r.list.size() >= 2, "list"));

        // ---------- webhooks ----------
        WebhookCreateResponse wc = check("Webhook.create", () -> Webhook.create(map("webhook", map("type", "DLR", "url", "https://hooks.example.com/dlr"))),
                r -> need(r.webhook != null && r.webhook.webhook_id != null && "DLR".equals(r.webhook.type), "webhook.webhook_id"));
        check("Webhook.all", Webhook::all, r -> need(r.webhooks != null && !r.webhooks.isEmpty() && r.webhooks.get(0).webhook_id != null, "webhooks"));
        if (wc != null && wc.webhook != null && wc.webhook.webhook_id != null) {
            Integer id = wc.webhook.webhook_id;
            check("Webhook.update", () -> Webhook.update(id, map("webhook", map("type", "MO", "url", "https://hooks.example.com/mo"))),
                    r -> need(r.webhook != null && "MO".equals(r.webhook.type) && "https://hooks.example.com/mo".equals(r.webhook.url), "webhook after update"));
            check("Webhook.delete", () -> Webhook.delete(id), r -> need(id.equals(r.deleted_id), "deleted_id"));
        }

        // ---------- balance alert ----------
        check("Notification.update (PUT /notification/balance)", () -> Notification.update(map("notification", map("alert_trigger", "500", "alert_email", "1",
                "email", "ops@example.com", "alert_gsm", "0", "phone_number", "33612345678"))),
                r -> need(r.status == 1 && r.notification != null && "500".equals(r.notification.alert_trigger), "notification.alert_trigger"));
        check("Notification.get", Notification::get, r -> need(r.notification != null && "500".equals(r.notification.alert_trigger)
                && "ops@example.com".equals(r.notification.email), "notification"));

        // ---------- invoices ----------
        check("Invoice.get() (GET /account/invoice)", () -> Invoice.get(), r -> need(r.status == 1 && r.lists != null && !r.lists.isEmpty()
                && r.lists.get(0).price != null, "lists[0].price (the SDK's model reads the products as `lists`)"));
        check("Invoice.get(1) (GET /account/invoice/1)", () -> Invoice.get(1), r -> need(r.status == 1 && r.lists != null && !r.lists.isEmpty(), "lists"));
        check("Invoice.download(1)", () -> {
            try (InputStream in = Invoice.download(1)) { return new String(in.readAllBytes(), 0, 8, "ISO-8859-1"); }
        }, r -> need(r.startsWith("%PDF"), "not a PDF"));

        // ---------- error mapping ----------
        expectError("error: unknown campaign -> ApiException -5", () -> Campaign.get(987654), com.smsfactor.exception.ApiException.class, -5);
        expectError("error: missing text -> InvalidRequestException -7", () -> Campaign.send(map("sms", map("message", map("pushtype", "alert"),
                "recipients", map("gsm", gsm("33612345678"))))), com.smsfactor.exception.InvalidRequestException.class, -7);
        List<Object> many = new ArrayList<>();
        for (int i = 0; i < 200; i++) many.add(map("value", String.format("336%08d", 20000000 + i)));
        String longText = "x".repeat(153 * 9);
        expectError("error: not enough credits -> InsufficientCreditsException -3", () -> Campaign.send(map("sms", map("message", map("text", longText),
                "recipients", map("gsm", many)))), com.smsfactor.exception.InsufficientCreditsException.class, -3);
        SMSFactor.apiToken = "not-a-token";
        expectError("error: bad token -> AuthenticationException -1", Account::credits, com.smsfactor.exception.AuthenticationException.class, -1);
        SMSFactor.apiToken = token;

        System.out.println(passed + " passed, " + failed + " failed");
        if (!failures.isEmpty()) System.out.println("failed: " + failures);
        fh.close();
    }
}
