<?php
// Drives the unmodified SMSFactor PHP SDK against a running Pigeon.
// Usage: php sdk_check.php BASE_URL TOKEN
// Guzzle comes from Debian (php-guzzlehttp-guzzle); the SDK from ../php/src through a PSR-4 autoloader.
require_once '/usr/share/php/GuzzleHttp/autoload.php';
spl_autoload_register(function ($class) {
    if (strncmp($class, 'SMSFactor\\', 10) !== 0) return;
    $file = __DIR__ . '/../php/src/' . str_replace('\\', '/', substr($class, 10)) . '.php';
    if (is_file($file)) require $file;
});

use SMSFactor\SMSFactor;
use SMSFactor\Account;
use SMSFactor\Campaign;
use SMSFactor\ContactList;
use SMSFactor\Message;
use SMSFactor\Token;
use SMSFactor\Webhook;

[$_, $base, $token] = $argv;
SMSFactor::$apiBase = $base;            // public static: no change to the SDK needed
SMSFactor::setApiToken($token);
echo "SDK base URL set to " . SMSFactor::$apiBase . "\n";

$passed = 0; $failed = 0; $failures = [];
function short($s) { $s = str_replace("\n", ' ', (string)$s); return strlen($s) > 400 ? substr($s, 0, 400) . '…' : $s; }

function check($name, callable $call, callable $ok = null) {
    global $passed, $failed, $failures;
    try {
        $r = $call();
        $problem = $ok ? $ok($r) : null;
        $body = ($r instanceof \SMSFactor\ApiResponse) ? $r->getBody() : $r;
        if ($problem === null) { $passed++; echo "PASS $name  " . short($body) . "\n"; }
        else { $failed++; $failures[] = $name; echo "FAIL $name: $problem\n     body: " . short($body) . "\n"; }
        return $r;
    } catch (\SMSFactor\Error\Base $e) {
        $failed++; $failures[] = $name;
        echo "FAIL $name: " . get_class($e) . " code=" . var_export($e->getSMSFactorCode(), true) . " http=" . $e->getHttpStatus()
            . " msg=" . $e->getMessage() . "\n     body: " . short($e->getHttpBody()) . "\n";
    } catch (\Throwable $e) {
        $failed++; $failures[] = $name;
        echo "FAIL $name: " . get_class($e) . ": " . short($e->getMessage()) . "\n";
    }
    return null;
}

function expectError($name, callable $call, $class, $code) {
    global $passed, $failed, $failures;
    try {
        $r = $call();
        $failed++; $failures[] = $name;
        echo "FAIL $name: no exception\n     body: " . short($r->getBody()) . "\n";
    } catch (\SMSFactor\Error\Base $e) {
        $good = ($e instanceof $class) && $e->getSMSFactorCode() === $code;
        if ($good) $passed++; else { $failed++; $failures[] = $name; }
        echo ($good ? "PASS " : "FAIL ") . "$name: " . get_class($e) . " code=" . var_export($e->getSMSFactorCode(), true)
            . " http=" . $e->getHttpStatus() . " msg=" . $e->getMessage() . ($good ? '' : "\n     body: " . short($e->getHttpBody())) . "\n";
    } catch (\Throwable $e) {
        $failed++; $failures[] = $name;
        echo "FAIL $name: " . get_class($e) . ": " . short($e->getMessage()) . "\n";
    }
}
function need($cond, $what) { return $cond ? null : $what; }
$seq = (int)(microtime(true) * 10) % 10000000;
function uniq() { global $seq; return sprintf('3362%07d', ($seq++) % 10000000); }

// ---------- account ----------
check('Account::credits', fn() => Account::credits(), fn($r) => need($r->status === 1 && $r->credits > 0, 'credits'));
check('Account::get', fn() => Account::get(), fn($r) => need(isset($r->account->email), 'account.email'));
$user = ['firstname' => 'firstname', 'lastname' => 'lastname', 'city' => 'city', 'phone' => '0011223344', 'address1' => 'address',
    'zip' => '56330', 'country_code' => 'fr', 'isChild' => 0, 'unlimited' => 0, 'email' => 'php+' . uniqid() . '@example.com', 'password' => 'edR3meDeDn0m'];
// A top-level account (isChild 0) is the operator's to create: Pigeon refuses it with -7 on purpose.
expectError('Account::create (README params, isChild 0) -> InvalidRequest -7', fn() => Account::create(['account' => $user]),
    \SMSFactor\Error\InvalidRequest::class, -7);
$child = array_merge($user, ['isChild' => 1, 'email' => 'phpchild+' . uniqid() . '@example.com']);
$sub = check('Account::create (isChild 1)', fn() => Account::create(['account' => $child]), fn($r) => need($r->status === 1 && $r->id, 'id'));
check('Account::subAccounts', fn() => Account::subAccounts(), fn($r) => need(count($r->{'sub-accounts'} ?? []) > 0, 'sub-accounts'));

// ---------- tokens ----------
$tc = check('Token::create', fn() => Token::create(['token' => ['name' => 'token sdk php']]), fn($r) => need($r->token && $r->token_id, 'token/token_id'));
if ($sub) check('Token::createForSubAccount', fn() => Token::createForSubAccount($sub->id, ['token' => ['name' => 'sub token']]), fn($r) => need($r->token, 'token'));
check('Token::all', fn() => Token::all(), fn($r) => need(count($r->tokens) >= 2, 'tokens'));
if ($tc) check('Token::delete', fn() => Token::delete($tc->token_id), fn($r) => need($r->status === 1, 'status'));

// ---------- messages ----------
check('Message::send simulate (GET /send/simulate)', fn() => Message::send(['to' => '33612345678', 'text' => 'Hello from PHP'], true), fn($r) => need($r->status === 1 && $r->total === 1, 'total'));
check('Message::send (GET /send)', fn() => Message::send(['to' => '33612345678', 'text' => 'Hello from PHP', 'sender' => 'SDK']), fn($r) => need($r->status === 1 && $r->ticket, 'ticket'));
check('Message::send with <-short-> and links[] (GET /send)', fn() => Message::send(['to' => '33612345670', 'text' => 'Track <-short->', 'links' => ['https://example.com/p']]),
    fn($r) => need($r->status === 1 && $r->ticket, 'ticket'));

// ---------- campaigns ----------
$payload = ['sms' => ['message' => ['text' => 'Your order: <-short->', 'pushtype' => 'alert', 'sender' => 'SDK', 'links' => ['https://example.com/orders/1']],
    'recipients' => ['gsm' => [['value' => '33612340011', 'gsmsmsid' => 'php-1'], ['value' => '33612340012'], ['value' => '33612340012'], ['value' => '12']]]]];
check('Campaign::send simulate', fn() => Campaign::send($payload, true), fn($r) => need($r->status === 1 && $r->total === 4 && $r->duplicated === 1 && $r->invalid === 1, 'counts'));
$cs = check('Campaign::send (<-short->)', fn() => Campaign::send($payload), fn($r) => need($r->status === 1 && $r->ticket && $r->sent === 2, 'ticket/sent'));
$delay = (new DateTime('+1 day', new DateTimeZone('Europe/Paris')))->format('Y-m-d H:i:s');
$cl = check('Campaign::send delayed', fn() => Campaign::send(['sms' => ['message' => ['text' => 'Later', 'delay' => $delay], 'recipients' => ['gsm' => [['value' => '33612340013']]]]]),
    fn($r) => need($r->status === 1 && $r->ticket, 'ticket'));
sleep(2);
if ($cs) check('Campaign::get', fn() => Campaign::get($cs->ticket), fn($r) => need(count($r->campaign) === 1 && $r->campaign[0]->id === $cs->ticket, 'campaign'));
if ($cl) check('Campaign::cancel', fn() => Campaign::cancel($cl->ticket), fn($r) => need($r->status === 1, 'status'));
check('Campaign::history([length=>5])', fn() => Campaign::history(['length' => 5]), fn($r) => need(count($r->campaigns) >= 1 && count($r->campaigns) <= 5, 'campaigns'));

// ---------- lists ----------
$lc = check('ContactList::create', fn() => ContactList::create(['list' => ['name' => 'php list', 'contacts' => ['gsm' => [
    ['value' => '33600000101', 'info1' => 'A'], ['value' => '33600000102', 'info1' => 'B']]]]]), fn($r) => need($r->status === 1 && $r->id && $r->contacts === 2, 'id/contacts'));
if ($lc) {
    $id = $lc->id;
    check('ContactList::addContacts (README: list_id)', fn() => ContactList::addContacts(['list' => ['list_id' => $id, 'contacts' => ['gsm' => [['value' => '33600000103'], ['value' => '33600000101']]]]]),
        fn($r) => need($r->status === 1 && $r->id === $id, "answered list id {$r->id}, expected $id"));
    $lg = check('ContactList::get', fn() => ContactList::get($id), fn($r) => need(count($r->list) === 3, 'three contacts'));
    check('ContactList::all', fn() => ContactList::all(), fn($r) => need(count($r->lists) >= 1, 'lists'));
    check('ContactList::deduplicate', fn() => ContactList::deduplicate($id), fn($r) => need($r->status === 1, 'status'));
    if ($lg) check('ContactList::removeContact', fn() => ContactList::removeContact($lg->list[2]->id), fn($r) => need($r->status === 1, 'status'));
    $lp = ['sms' => ['message' => ['text' => 'Hi [info1]', 'sender' => 'SDK'], 'lists' => [['value' => $id]]]];
    check('Campaign::sendToLists simulate', fn() => Campaign::sendToLists($lp, true), fn($r) => need($r->status === 1 && $r->total === 2, 'total'));
    check('Campaign::sendToLists', fn() => Campaign::sendToLists($lp), fn($r) => need($r->status === 1 && $r->ticket, 'ticket'));
    check('ContactList::delete', fn() => ContactList::delete($id), fn($r) => need($r->status === 1, 'status'));
}
$b1 = uniq(); $b2 = uniq();
check('ContactList::addToBlacklist', fn() => ContactList::addToBlacklist(['blacklist' => ['contacts' => ['gsm' => [['value' => $b1], ['value' => $b2]]]]]),
    fn($r) => need($r->added_contacts === 2, 'added_contacts'));
$bl = check('ContactList::blacklist', fn() => ContactList::blacklist(), fn($r) => need(count($r->list) >= 2, 'list'));
if ($bl) {
    $entry = null;
    foreach ($bl->list as $e) if ($e->destination === $b1) $entry = $e;
    check('ContactList::removeBlacklistContact', fn() => ContactList::removeBlacklistContact($entry->id), fn($r) => need($r->status === 1, 'status'));
}
check('ContactList::AddToNpai', fn() => ContactList::AddToNpai(['npai' => ['contacts' => ['gsm' => [['value' => uniq()], ['value' => uniq()]]]]]),
    fn($r) => need($r->added_contacts === 2, 'added_contacts'));
check('ContactList::npai', fn() => ContactList::npai(), fn($r) => need(count($r->list) >= 2, 'list'));

// ---------- webhooks ----------
$wc = check('Webhook::create', fn() => Webhook::create(['webhook' => ['type' => 'DLR', 'url' => 'https://hooks.example.com/php']]), fn($r) => need($r->webhook->webhook_id ?? null, 'webhook_id'));
check('Webhook::all', fn() => Webhook::all(), fn($r) => need(count($r->webhooks) >= 1, 'webhooks'));
if ($wc) {
    $wid = $wc->webhook->webhook_id;
    check('Webhook::update', fn() => Webhook::update($wid, ['webhook' => ['type' => 'MO', 'url' => 'https://hooks.example.com/php-mo']]), fn($r) => need($r->webhook->type === 'MO', 'type'));
    check('Webhook::delete', fn() => Webhook::delete($wid), fn($r) => need($r->status === 1, 'status'));
}

// ---------- error mapping ----------
expectError('error: unknown campaign -> Api -5', fn() => Campaign::get(987654), \SMSFactor\Error\Api::class, -5);
expectError('error: missing text -> InvalidRequest -7', fn() => Campaign::send(['sms' => ['message' => ['pushtype' => 'alert'], 'recipients' => ['gsm' => [['value' => '33612345678']]]]]),
    \SMSFactor\Error\InvalidRequest::class, -7);
$many = []; for ($i = 0; $i < 200; $i++) $many[] = ['value' => sprintf('336%08d', 30000000 + $i)];
expectError('error: not enough credits -> InsufficientCredits -3', fn() => Campaign::send(['sms' => ['message' => ['text' => str_repeat('x', 153 * 9)], 'recipients' => ['gsm' => $many]]]),
    \SMSFactor\Error\InsufficientCredits::class, -3);
SMSFactor::setApiToken('not-a-token');
expectError('error: bad token -> Authentication -1', fn() => Account::credits(), \SMSFactor\Error\Authentication::class, -1);
SMSFactor::setApiToken($token);

echo "$passed passed, $failed failed\n";
if ($failures) echo "failed: " . implode(', ', $failures) . "\n";
