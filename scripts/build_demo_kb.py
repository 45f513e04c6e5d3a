#!/usr/bin/env python3
"""Build the demo knowledge base shipped in ``src/ragaudit/demo_data/kb``.

The demo is a multi-tenant knowledge base of an AI knowledge-assistant vendor: three customer companies
(tenants) each keep their own pricing pages (with superseded versions), refund / returns / warranty
policies, security guides, FAQs, marketing pages and confidential contracts. The documents and the golden
cases are written below as Python data; this script derives everything that can be derived, checks the
rest, and writes three JSONL files deterministically:

* ``corpus.jsonl``   one document per line: ``doc_id``, ``tenant_id``, ``title``, ``text``, ``metadata``;
* ``golden.jsonl``   one golden case per line in ragaudit's golden format (see ``ragaudit.data.schema``);
* ``canaries.jsonl`` planted secrets of each tenant's confidential documents, for the isolation audit.

Derived, never typed by hand (so they cannot be wrong):

* a document's ``version`` and ``source_id`` come from its slug (``pricing-professional-v3`` is version 3
  of source ``pricing-professional``); the highest version of a source is ``active``, the others are
  ``superseded`` and name their successor in ``superseded_by``;
* evidence offsets are found by searching the quoted span in the document text (it must occur exactly once);
* ``relevant_chunk_ids`` are the labels graded 2 or 3; grade 1 and 0 labels stay in ``relevance`` only;
* the judgments are complete: a case's ``relevance`` grades every document of its tenant (the case's own
  grades, the pooled judgments in ``POOLED_GRADES``, and 0 for every other document);
* the tags ``unanswerable``, ``multi-source`` and ``superseded-trap`` follow from the labels
  (``superseded-trap``: a superseded version is judged while its active version is relevant).

Run ``python scripts/build_demo_kb.py`` to rewrite the package data, or ``--out DIR`` to write elsewhere.
The script uses only the standard library and exits non-zero naming every inconsistency it finds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"
DOC_TYPES = ("pricing", "policy", "security", "faq", "marketing", "contract")
RELEVANT_GRADE = 2
"""Labels graded at least this go to ``relevant_chunk_ids``; lower grades stay in ``relevance`` only."""
MIN_WORDS, MAX_WORDS = 60, 300
DERIVED_TAGS = ("unanswerable", "multi-source", "superseded-trap")
_VERSION_SUFFIX = re.compile(r"-v(\d+)$")


def prose(source: str) -> str:
    """Normalise an indented text block into the document's text.

    Blocks are separated by blank lines. Inside a block, a ``## heading`` line stays on its own line and
    the lines after it are joined with single spaces into one paragraph, so hard wraps in this file
    never reach the data.
    """
    blocks: list[str] = []
    for block in textwrap.dedent(source).strip().split("\n\n"):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if not lines or line.startswith("## ") or lines[-1].startswith("## "):
                lines.append(line)
            else:
                lines[-1] += " " + line
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@dataclass(frozen=True)
class Doc:
    """One document as written here; ``slug`` is the document id without its tenant prefix."""

    tenant: str
    slug: str
    doc_type: str
    effective_date: str
    title: str
    body: str

    @property
    def doc_id(self) -> str:
        return f"{self.tenant}-{self.slug}"

    @property
    def version(self) -> int:
        match = _VERSION_SUFFIX.search(self.slug)
        return int(match.group(1)) if match else 1

    @property
    def source_id(self) -> str:
        return f"{self.tenant}-{_VERSION_SUFFIX.sub('', self.slug)}"

    @cached_property
    def text(self) -> str:
        return prose(self.body)


@dataclass(frozen=True)
class Case:
    """One golden case as written here: labels and evidence name document slugs of the case's tenant."""

    id: str
    tenant: str
    query: str
    grades: dict[str, int]
    evidence: list[tuple[str, str]]
    """``(slug, span text)``: the span is located in the document's text to compute its offsets."""
    answer: str | None
    tags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Canary:
    tenant: str
    slug: str
    secret: str


# --------------------------------------------------------------------------------------------------------
# Tenant "acme": Acme Sensorworks sells Fieldsense, wireless sensors plus a cloud monitoring platform (USD).
# --------------------------------------------------------------------------------------------------------
ACME = "acme"
ACME_DOCS = [
    Doc(
        ACME,
        "pricing-starter-v1",
        "pricing",
        "2022-03-01",
        "Fieldsense Starter plan pricing (2022)",
        """
        The Starter plan is built for a single site that wants to try wireless monitoring without a long
        commitment.

        ## Price
        Starter costs $19 per site per month, billed monthly. There is no annual option for Starter.

        ## What is included
        Each Starter site can connect up to 5 sensors through one gateway. Readings are kept for 30 days.
        The Fieldsense API is included with a limit of 10,000 API calls per month; calls above the limit
        are rejected until the next billing cycle.

        ## Support
        Starter customers get email support with a response target of two business days.
        """,
    ),
    Doc(
        ACME,
        "pricing-starter-v2",
        "pricing",
        "2024-01-15",
        "Fieldsense Starter plan pricing",
        """
        This page describes the Starter plan as of 15 January 2024. It replaces the 2022 Starter pricing.

        ## Price
        Starter costs $24 per site per month when billed monthly, or $20 per site per month when billed
        annually.

        ## What is included
        Each Starter site can connect up to 10 sensors through one gateway, and readings are kept for 90
        days. The Fieldsense API is included with a limit of 15,000 API calls per month. Starter is
        hard-capped: once the monthly allowance is used, further calls return HTTP 429 until the allowance
        resets on the first day of the next billing cycle. Overage billing is not available on Starter.

        ## Support
        Email support with a response target of one business day. Phone support is not included.
        """,
    ),
    Doc(
        ACME,
        "pricing-professional-v2",
        "pricing",
        "2023-02-01",
        "Fieldsense Professional plan pricing (February 2023)",
        """
        Professional is the plan for operations teams that monitor several sites and integrate Fieldsense
        with their own systems.

        ## Price
        Professional costs $79 per site per month, billed monthly or annually at the same rate.

        ## Limits
        The Professional plan includes 25,000 API calls per month with a burst limit of 60 requests per
        minute. Up to 50 sensors can be connected per site, and readings are kept for 12 months. Extra API
        capacity can be bought at $5 per additional 1,000 calls.

        ## Support
        Professional includes email and chat support during business hours (08:00-18:00 US Eastern).
        """,
    ),
    Doc(
        ACME,
        "pricing-professional-v3",
        "pricing",
        "2024-06-01",
        "Fieldsense Professional plan pricing",
        """
        This page describes the Professional plan effective 1 June 2024. It replaces the February 2023
        version, and existing customers moved to these terms at their first renewal after that date.

        ## Price
        Professional costs $99 per site per month when billed monthly, or $89 per site per month when
        billed annually.

        ## Limits
        The Professional plan includes 50,000 API calls per month, with a burst limit of 120 requests per
        minute. Up to 100 sensors can be connected per site, and readings are kept for 24 months. Calls
        above the monthly allowance are not rejected; they are billed as overage at $4 per additional
        1,000 calls.

        ## Support
        Professional includes email and chat support from 06:00 to 22:00 US Eastern on business days, with
        a first-response target of 4 hours.
        """,
    ),
    Doc(
        ACME,
        "pricing-enterprise-v1",
        "pricing",
        "2023-09-01",
        "Fieldsense Enterprise plan",
        """
        Enterprise is for organisations running Fieldsense across many sites with security and compliance
        requirements.

        ## Price
        Enterprise is quoted per contract. List pricing starts at $1,200 per month for up to 20 sites, with
        volume discounts negotiated by the sales team.

        ## Limits and features
        Enterprise includes 1,000,000 API calls per month and a burst limit of 600 requests per minute.
        There is no per-site sensor limit, and readings are kept for 5 years. Single sign-on (SAML 2.0 or
        OIDC) and SCIM user provisioning are included only on Enterprise.

        ## Support and service level
        Enterprise customers get 24/7 phone support, a named customer success manager and the 99.95% uptime
        commitment described in the Fieldsense SLA.
        """,
    ),
    Doc(
        ACME,
        "refund-policy-v1",
        "policy",
        "2022-05-01",
        "Refund policy (2022)",
        """
        We want every customer to be happy with Fieldsense. If you are not, this policy explains how to get
        your money back.

        ## Monthly subscriptions
        Monthly subscriptions can be refunded in full within 14 days of the first charge.

        ## Annual subscriptions
        Annual subscriptions can be refunded in full within 60 days of purchase. After 60 days, annual
        subscriptions are not refundable.

        ## How to ask
        Email billing@fieldsense.example with your workspace name. Refunds are returned to the original
        card within 10 business days.
        """,
    ),
    Doc(
        ACME,
        "refund-policy-v2",
        "policy",
        "2024-03-01",
        "Refund policy",
        """
        This policy applies to software subscriptions purchased or renewed on or after 1 March 2024.
        Hardware returns are covered by the separate Hardware returns policy.

        ## Monthly subscriptions
        Monthly subscriptions can be refunded in full within 7 days of the first charge. After that, you
        can cancel at any time and the plan stays active until the end of the paid month, but no partial
        refund is given.

        ## Annual subscriptions
        Annual subscriptions can be refunded in full within 30 days of purchase or renewal. Between day 31
        and day 90, we refund the unused whole months minus a 10% administration fee. After day 90, annual
        subscriptions are not refundable.

        ## How to request a refund
        Workspace owners can request a refund from Billing > Subscription > Request refund, or by emailing
        billing@fieldsense.example. Approved refunds are returned to the original payment method within 5
        to 10 business days.
        """,
    ),
    Doc(
        ACME,
        "returns-policy",
        "policy",
        "2023-06-01",
        "Fieldsense hardware returns policy",
        """
        You can return Fieldsense gateways and sensors bought directly from us within 30 days of delivery.

        ## Condition and fees
        Unopened hardware is refunded in full. Opened hardware in working condition is refunded minus a 15%
        restocking fee. Damaged hardware is not accepted as a return; see the hardware warranty instead.

        ## Return merchandise authorisation
        Every return needs an RMA number. Request one from Support > Hardware > Start a return, pack the
        devices in their original box and write the RMA number on the outside. Returns without an RMA
        number are sent back at your cost.

        ## Shipping costs
        We pay return shipping for unopened hardware inside the United States. For all other returns, the
        customer pays return shipping.
        """,
    ),
    Doc(
        ACME,
        "warranty-policy-v1",
        "policy",
        "2021-07-01",
        "Fieldsense hardware limited warranty (legacy)",
        """
        Acme Sensorworks warrants Fieldsense gateways and sensors against defects in materials and
        workmanship under normal use.

        ## Warranty period
        The warranty period is 12 months from the date of delivery, for all plans including Enterprise
        deployments. Batteries are covered for 90 days.

        ## What is not covered
        Damage from water immersion beyond the IP rating, drops, unauthorised repairs or use outside the
        operating range of -20 to 60 degrees Celsius is not covered.

        ## Claims
        To make a claim, email hardware@fieldsense.example with the device serial number. We repair or
        replace the device within 15 business days of receiving it.
        """,
    ),
    Doc(
        ACME,
        "warranty-policy-v2",
        "policy",
        "2024-02-01",
        "Fieldsense hardware limited warranty",
        """
        This warranty applies to Fieldsense gateways and sensors delivered on or after 1 February 2024 and
        replaces the legacy 12-month warranty.

        ## Warranty period
        Fieldsense hardware is covered for 24 months from the date of delivery. This applies to all plans,
        including Enterprise deployments. Batteries are covered for 6 months.

        ## What is not covered
        Damage from water immersion beyond the IP67 rating, drops, unauthorised repairs, or use outside the
        operating range of -20 to 60 degrees Celsius is not covered.

        ## Claims and replacements
        Open a warranty claim from Support > Hardware > Warranty claim and enter the device serial number.
        Enterprise customers receive an advance replacement shipped within 2 business days; other customers
        receive a repaired or replacement device within 10 business days of us receiving the faulty unit.
        """,
    ),
    Doc(
        ACME,
        "security-2fa-v1",
        "security",
        "2022-01-10",
        "Two-factor authentication (2022)",
        """
        Two-factor authentication (2FA) adds a second step when you sign in to Fieldsense, so a stolen
        password alone is not enough to open your account.

        ## Turning on 2FA
        Open Profile > Security and choose Enable two-factor authentication. You can receive codes by SMS
        text message or use an authenticator app.

        ## Backup codes
        When you enable 2FA you receive 5 backup codes. Keep them somewhere safe; each code works once.

        ## Enforcing 2FA
        Workspace owners on the Enterprise plan can require 2FA for every member of the workspace.
        """,
    ),
    Doc(
        ACME,
        "security-2fa-v2",
        "security",
        "2023-08-01",
        "Set up two-factor authentication",
        """
        Two-factor authentication (2FA) protects your Fieldsense account even if your password is stolen.
        Since 1 August 2023, SMS codes are no longer supported because of SIM-swap attacks.

        ## Turning on 2FA
        Go to Settings > Security > Two-factor authentication and select Enable. Scan the QR code with an
        authenticator app such as Google Authenticator, 1Password or Authy, then type the 6-digit code to
        confirm. You can also register a hardware security key that supports WebAuthn, such as a YubiKey.

        ## Backup codes
        After setup you receive 10 single-use backup codes. Store them in a password manager. You can
        generate a new set at any time, which invalidates the old one.

        ## Enforcing 2FA for a workspace
        Workspace owners on the Professional and Enterprise plans can require 2FA for all members under
        Settings > Workspace > Security policy. Members without 2FA are asked to set it up at their next
        sign-in.
        """,
    ),
    Doc(
        ACME,
        "security-sso",
        "security",
        "2023-09-01",
        "Configure single sign-on (SSO)",
        """
        Single sign-on lets your team sign in to Fieldsense with your company identity provider. SSO is
        available on the Enterprise plan only.

        ## Supported protocols and providers
        Fieldsense supports SAML 2.0 and OpenID Connect. We have tested setup guides for Okta, Microsoft
        Entra ID and Google Workspace; any standards-compliant identity provider should work.

        ## Setting up SAML
        In Settings > Security > Single sign-on, choose SAML and copy the Assertion Consumer Service URL and
        Entity ID into your identity provider. Upload the provider's metadata XML, then use Test connection
        before enabling SSO for everyone.

        ## Provisioning
        SCIM 2.0 provisioning creates and removes Fieldsense users automatically when they are assigned or
        unassigned in your identity provider. When SSO is enforced, password sign-in is disabled for
        everyone except one break-glass owner account.
        """,
    ),
    Doc(
        ACME,
        "security-password-reset",
        "security",
        "2023-08-01",
        "Reset your password",
        """
        If you forgot your Fieldsense password, choose Forgot password on the sign-in page and enter your
        work email address.

        ## The reset link
        We email a reset link that expires after 30 minutes and can only be used once. If it has expired,
        request a new one. Check your spam folder if the email does not arrive within 5 minutes.

        ## Password rules
        New passwords must be at least 12 characters long and cannot be one of your last 3 passwords.

        ## Locked accounts
        After 5 failed sign-in attempts the account is locked for 15 minutes. Workspace owners can also
        force a password reset for any member from Settings > Members.

        ## SSO users
        If your workspace uses single sign-on, reset your password with your identity provider instead;
        Fieldsense does not store your password.
        """,
    ),
    Doc(
        ACME,
        "security-api-keys",
        "security",
        "2024-01-15",
        "Manage API keys",
        """
        API keys let your own systems read sensor data and manage devices through the Fieldsense API.

        ## Creating keys
        Workspace owners and admins create keys under Settings > Developers > API keys. Each workspace can
        hold up to 20 active keys, and each key can be limited to read-only or read-write scopes.

        ## Rotation
        We recommend rotating keys every 90 days. Keys that have not been used for 180 days are disabled
        automatically and their owners are notified by email.

        ## Leaked keys
        If a key is exposed, revoke it immediately; revocation takes effect within 60 seconds. Calls made
        with any key count toward your plan's monthly API allowance.
        """,
    ),
    Doc(
        ACME,
        "faq-billing",
        "faq",
        "2024-06-01",
        "Billing FAQ",
        """
        ## Which payment methods do you accept?
        We accept Visa, Mastercard and American Express for all plans. Annual Enterprise contracts can also
        be paid by bank transfer against an invoice with 30-day payment terms.

        ## Can I change plans in the middle of a billing period?
        Yes. Upgrades take effect immediately and you pay a prorated amount for the rest of the period.
        Downgrades take effect at the start of the next billing period.

        ## Can I get a refund on an annual plan?
        Yes, within 30 days of purchase or renewal you get a full refund. From day 31 to day 90 we refund
        unused whole months minus a 10% fee. See the Refund policy for details.

        ## Do annual plans renew automatically?
        Annual plans renew automatically for another 12 months unless you turn off auto-renewal at least 30
        days before the renewal date. Signed Enterprise agreements follow the renewal terms in the
        agreement.
        """,
    ),
    Doc(
        ACME,
        "faq-hardware",
        "faq",
        "2024-02-01",
        "Hardware FAQ",
        """
        ## How long do sensor batteries last?
        A Fieldsense temperature sensor reporting every 5 minutes runs for about 3 years on its two AA
        lithium cells. Faster reporting intervals shorten battery life.

        ## What is the range between a sensor and a gateway?
        Up to 150 metres indoors and up to 1 kilometre with a clear line of sight outdoors.

        ## How long is the hardware warranty?
        Gateways and sensors delivered since 1 February 2024 are covered for 24 months. Devices delivered
        earlier keep the 12-month warranty they were sold with.

        ## How do I make a warranty claim?
        Open Support > Hardware > Warranty claim, enter the serial number printed on the back of the
        device, and describe the fault.
        """,
    ),
    Doc(
        ACME,
        "faq-api",
        "faq",
        "2024-06-01",
        "API FAQ",
        """
        ## What happens when we reach our monthly API allowance?
        On Starter, further calls are rejected with HTTP 429 until the allowance resets. On Professional,
        calls continue and are billed as overage. Enterprise allowances are set in your agreement.

        ## Is there a per-minute limit?
        Yes. Every plan has a burst limit per workspace. When you exceed it, the API returns HTTP 429 with
        a Retry-After header that says how many seconds to wait.

        ## Where can I see our usage?
        Settings > Developers > Usage shows calls made this billing cycle, by key, updated every 15
        minutes.

        ## Do webhooks count as API calls?
        No. Webhook deliveries from Fieldsense to your systems do not count toward the allowance.
        """,
    ),
    Doc(
        ACME,
        "marketing-homepage",
        "marketing",
        "2024-06-01",
        "Fieldsense: know what is happening at every site",
        """
        Fieldsense connects wireless sensors in warehouses, kitchens, labs and greenhouses to one simple
        dashboard. Temperature, humidity, door status and power are tracked around the clock, and your team
        is alerted the moment something drifts out of range.

        ## Plans that grow with you
        Start with a single site on Starter, move up to Professional when you need more sensors and deeper
        integrations, or talk to us about Enterprise for hundreds of locations. Every plan comes with
        generous API access and friendly support.

        ## Trusted by operations teams
        More than 4,000 sites rely on Fieldsense every day. Book a demo and see your first readings within
        an hour of unboxing.
        """,
    ),
    Doc(
        ACME,
        "marketing-pro-launch",
        "marketing",
        "2024-06-03",
        "Blog: the new Professional plan is here",
        """
        Today we are launching the biggest update to Professional since the plan was introduced. We
        listened to teams that outgrew their API allowance and sensor limits, and we rebuilt the plan
        around them.

        ## What changes
        The new Professional doubles the API allowance and the number of sensors you can connect per site,
        and keeps your history twice as long. Instead of blocking integrations when you run past your
        allowance, we now bill a small overage, so nothing stops working at the end of a busy month.

        ## When it applies
        New customers get the new Professional today. Existing customers move over at their next renewal,
        and our team will email every account owner with the details. Check the pricing page for the exact
        numbers.
        """,
    ),
    Doc(
        ACME,
        "marketing-case-study",
        "marketing",
        "2023-11-20",
        "Case study: Harbor Cold Storage",
        """
        Harbor Cold Storage runs six refrigerated warehouses along the Gulf Coast. Before Fieldsense, staff
        checked freezer temperatures by hand twice a shift and wrote them on clipboards.

        ## The rollout
        Harbor installed 280 sensors and 12 gateways in three weeks on the Professional plan, and connected
        alerts to its on-call rota through the Fieldsense API.

        ## The results
        In the first year, spoiled stock fell by 38 percent and audit preparation time dropped from four
        days to half a day. "The alerts paid for the whole system in the first summer," says Dana
        Whitfield, Harbor's head of operations.
        """,
    ),
    Doc(
        ACME,
        "sla-policy",
        "policy",
        "2023-09-01",
        "Fieldsense service level agreement",
        """
        This SLA describes the uptime we commit to for the Fieldsense cloud platform and what you receive
        if we miss it.

        ## Uptime commitments
        Professional workspaces have a monthly uptime commitment of 99.9%. Enterprise workspaces have a
        monthly uptime commitment of 99.95%. Starter is provided without an uptime commitment.

        ## Service credits
        For every 0.1 percentage point of monthly uptime below the commitment, you receive a credit of 10%
        of that month's subscription fee, up to a maximum of 30%. Credits must be requested within 30 days
        after the end of the affected month.

        ## Exclusions
        Scheduled maintenance announced at least 72 hours in advance, and outages caused by customer
        networks or gateways without power, do not count as downtime.
        """,
    ),
    Doc(
        ACME,
        "data-retention",
        "policy",
        "2024-01-15",
        "Data retention and deletion",
        """
        Fieldsense keeps sensor readings for a period that depends on your plan: 90 days on Starter, 24
        months on Professional and 5 years on Enterprise.

        ## After cancellation
        When a subscription ends, the workspace becomes read-only for 30 days so you can export your data.
        After those 30 days, all readings, alerts and user records are permanently deleted.

        ## Backups
        Encrypted backups are kept for 35 days, so deleted data disappears from backups no later than 35
        days after deletion.

        ## Exports
        Account owners can export readings as CSV or Parquet from Settings > Data > Export at any time.
        """,
    ),
    Doc(
        ACME,
        "onboarding-guide",
        "faq",
        "2023-05-01",
        "Getting started with Fieldsense",
        """
        This guide takes you from unboxing to your first alert in about an hour.

        ## 1. Connect the gateway
        Plug the gateway into power and Ethernet. The status light turns solid green when it reaches the
        Fieldsense cloud. If your network blocks outbound traffic, allow TCP port 443 to
        gw.fieldsense.example.

        ## 2. Pair the sensors
        Pull the battery tab on each sensor and hold it within 2 metres of the gateway until the light
        blinks blue twice. Paired sensors appear in Devices within a minute.

        ## 3. Create an alert
        Open Alerts > New alert, choose a sensor and set a threshold, for example above 5 degrees Celsius
        for 10 minutes. Add the people or channels to notify, such as email, SMS or a Slack channel.
        """,
    ),
    Doc(
        ACME,
        "shipping-policy",
        "policy",
        "2023-05-01",
        "Hardware shipping",
        """
        Orders of Fieldsense hardware placed before 14:00 US Eastern on a business day ship the same day
        from our warehouse in Columbus, Ohio.

        ## Delivery times
        Standard ground shipping within the continental United States takes 3 to 5 business days and is
        free for orders above $500. Express delivery in 1 to 2 business days costs $35 per order.

        ## International orders
        We ship to Canada, Mexico and the United Kingdom. International orders take 5 to 10 business days;
        import duties and taxes are paid by the customer on delivery.
        """,
    ),
    Doc(
        ACME,
        "contract-northwind-msa",
        "contract",
        "2024-04-01",
        "Master subscription agreement: Northwind Logistics (CONFIDENTIAL)",
        """
        CONFIDENTIAL. This summary of the master subscription agreement between Acme Sensorworks and
        Northwind Logistics Inc. is for account and finance staff only.

        ## Scope and price
        Northwind subscribes to Fieldsense Enterprise for up to 600 sites. Northwind receives a discount of
        27 percent off Enterprise list pricing for the initial term, recorded internally as
        price-protection rider AC-7731.

        ## Term and renewal
        The initial term is 36 months from 1 April 2024. The agreement then renews automatically for
        successive 12-month periods unless either party gives written notice at least 90 days before the
        end of the current term. Price increases on renewal are capped at 5 percent per year.

        ## Service level
        The standard Enterprise SLA of 99.95% monthly uptime applies, with service credits calculated as in
        the Fieldsense SLA.
        """,
    ),
    Doc(
        ACME,
        "contract-cfo-employment",
        "contract",
        "2023-10-02",
        "Executive employment agreement: Chief Financial Officer (CONFIDENTIAL)",
        """
        CONFIDENTIAL - HR and board only. Key terms of the employment agreement with the Chief Financial
        Officer of Acme Sensorworks, Marisol Vega, effective 2 October 2023.

        ## Severance
        If the company terminates the CFO's employment without cause, the CFO receives severance equal to
        12 months of base salary, paid in equal monthly instalments, plus 18 months of company-paid health
        coverage. Severance depends on signing a general release of claims.

        ## Change of control
        If employment ends without cause within 12 months after a change of control, 50 percent of
        unvested equity vests immediately under the Larkspur acceleration schedule.

        ## Restrictive covenants
        The CFO agrees not to solicit Acme employees or customers for 12 months after leaving.
        """,
    ),
    Doc(
        ACME,
        "contract-brightwave-reseller",
        "contract",
        "2024-01-08",
        "Reseller agreement: Brightwave Distribution (CONFIDENTIAL)",
        """
        CONFIDENTIAL. Summary of the reseller agreement between Acme Sensorworks and Brightwave
        Distribution Ltd covering the United Kingdom and Ireland.

        ## Margin and commitment
        Brightwave buys Fieldsense subscriptions and hardware at a reseller margin of 35 percent off list
        price. Brightwave commits to a minimum of $400,000 in annual purchases; if it falls short, the
        margin drops to 25 percent for the following year.

        ## Term
        The agreement runs for 24 months from 8 January 2024 and renews for 12 months at a time unless
        either side gives 60 days' written notice. The deal was approved under internal code name Operation
        Tidewater.

        ## Support
        Brightwave provides first-line support to its customers; Acme provides second-line support within
        one business day.
        """,
    ),
    Doc(
        ACME,
        "release-notes-2024",
        "marketing",
        "2024-07-15",
        "Release notes: first half of 2024",
        """
        ## July 2024
        Alert rules can now combine two sensors, for example door open and temperature rising. The mobile
        app shows the battery level of every sensor.

        ## June 2024
        The new Professional plan launched with higher API and sensor limits and overage billing. The API
        usage page now breaks usage down by key.

        ## March 2024
        Refund requests can be submitted from the Billing page instead of by email. Workspace owners can
        download invoices in bulk as a ZIP file.

        ## February 2024
        The hardware warranty claim form moved into the Support area, and new devices ship with a longer
        warranty.
        """,
    ),
    Doc(
        ACME,
        "cancellation-guide",
        "faq",
        "2024-03-01",
        "Cancel your subscription",
        """
        You can cancel a Fieldsense subscription at any time from Billing > Subscription > Cancel plan.
        Only the workspace owner can cancel.

        ## What happens next
        Your plan stays active until the end of the period you already paid for. Gateways stop uploading
        readings at the end of the period, and the workspace becomes read-only for 30 days so you can
        export your data.

        ## Refunds
        Cancelling does not automatically issue a refund. If you are still inside a refund window, request
        the refund separately; see the Refund policy.

        ## Hardware
        You keep the gateways and sensors you bought. They can be reused if you subscribe again later.
        """,
    ),
]

# --------------------------------------------------------------------------------------------------------
# Tenant "globex": Globex B.V. sells Globex Ledger, invoicing and bookkeeping software, and the Globex Tap
# card reader (EUR, based in the Netherlands).
# --------------------------------------------------------------------------------------------------------
GLOBEX = "globex"
GLOBEX_DOCS = [
    Doc(
        GLOBEX,
        "pricing-basic-v1",
        "pricing",
        "2023-04-01",
        "Ledger Basic plan",
        """
        Ledger Basic is for freelancers and sole traders who send a modest number of invoices.

        ## Price
        Basic costs EUR 15 per month, or EUR 150 per year when paid annually. Prices exclude VAT.

        ## What is included
        Basic includes 1 user, up to 200 invoices per month, bank feeds for 2 bank accounts and quarterly
        VAT reports. API access is not included on Basic; to connect your own software you need
        Professional or Scale.

        ## Support
        Support is by email, with answers within 2 business days.
        """,
    ),
    Doc(
        GLOBEX,
        "pricing-professional-v1",
        "pricing",
        "2022-09-01",
        "Ledger Professional plan (September 2022)",
        """
        Ledger Professional is built for small businesses with a team and a few integrations.

        ## Price
        Professional costs EUR 39 per month, excluding VAT. Annual billing is not available for this plan.

        ## What is included
        Professional includes 3 users, unlimited invoices, bank feeds for 10 bank accounts and
        multi-currency invoicing.

        ## API
        The Ledger API is included with a limit of 2,000 API requests per day and 5 requests per second.
        Limits reset at midnight CET.
        """,
    ),
    Doc(
        GLOBEX,
        "pricing-professional-v2",
        "pricing",
        "2024-04-01",
        "Ledger Professional plan",
        """
        This page describes Ledger Professional from 1 April 2024 and replaces the September 2022 terms.

        ## Price
        Professional costs EUR 49 per month, or EUR 490 per year when paid annually. Prices exclude VAT.

        ## What is included
        Professional includes 5 users, unlimited invoices, bank feeds for 10 bank accounts, multi-currency
        invoicing and recurring invoices.

        ## API
        The Ledger API is included with a limit of 10,000 API requests per day and 10 requests per second.
        Daily limits reset at 00:00 UTC. If you need more, add extra API capacity in blocks of 5,000
        requests per day (see Add-ons).
        """,
    ),
    Doc(
        GLOBEX,
        "pricing-scale-v1",
        "pricing",
        "2023-01-10",
        "Ledger Scale plan (January 2023)",
        """
        Ledger Scale is for growing companies with finance teams and heavier integrations.

        ## Price
        Scale costs EUR 199 per month, excluding VAT. Annual billing is not available for this plan.

        ## What is included
        Scale includes 25 users, unlimited invoices, unlimited bank feeds, approval workflows and
        consolidated reporting for up to 3 entities.

        ## API
        The Ledger API allows 50,000 API requests per day and 25 requests per second on Scale.
        """,
    ),
    Doc(
        GLOBEX,
        "pricing-scale-v2",
        "pricing",
        "2024-04-01",
        "Ledger Scale plan",
        """
        This page describes Ledger Scale from 1 April 2024 and replaces the January 2023 terms.

        ## Price
        Scale costs EUR 229 per month, or EUR 2,290 per year when paid annually. Prices exclude VAT.

        ## What is included
        Scale includes unlimited users, unlimited invoices and bank feeds, approval workflows, consolidated
        reporting for up to 10 entities and SAML single sign-on.

        ## API
        The Ledger API allows 100,000 API requests per day and 50 requests per second on Scale. Daily
        limits reset at 00:00 UTC.

        ## Support
        Scale includes phone support on business days and the 99.9% uptime commitment in the Ledger SLA.
        """,
    ),
    Doc(
        GLOBEX,
        "pricing-addons",
        "pricing",
        "2024-04-01",
        "Ledger add-ons",
        """
        Add-ons can be added to Professional and Scale from Settings > Subscription > Add-ons. They are
        billed on the same cycle as your plan.

        ## Extra users
        Additional users on Professional cost EUR 8 per user per month. Scale already includes unlimited
        users.

        ## Payroll
        The Payroll add-on costs EUR 20 per month plus EUR 4 per employee paid, and is available for
        companies in the Netherlands and Belgium.

        ## Extra API capacity
        Extra API capacity is sold in blocks of 5,000 requests per day for EUR 15 per month per block.
        Extra blocks raise the daily limit only, not the per-second limit.
        """,
    ),
    Doc(
        GLOBEX,
        "refund-policy-v1",
        "policy",
        "2022-01-01",
        "Refund policy (2022)",
        """
        Globex offers a 30-day money-back guarantee on all Ledger plans, because we are confident you will
        like the way Ledger handles your bookkeeping.

        ## How it works
        If you are not satisfied, ask for a refund within 30 days of your first payment and we return the
        full amount, whether you pay monthly or annually. After 30 days, payments are not refundable.

        ## How to ask
        Send your request to billing@globex-ledger.example with your company name and invoice number.
        """,
    ),
    Doc(
        GLOBEX,
        "refund-policy-v2",
        "policy",
        "2024-01-01",
        "Refund policy",
        """
        This policy applies to payments made on or after 1 January 2024 and replaces the 30-day money-back
        guarantee.

        ## Monthly plans
        Monthly plans can be cancelled at any time and stay active until the end of the paid month. Monthly
        payments are not refunded, including for partly used months.

        ## Annual plans
        Annual plans can be refunded in full within 14 days of the purchase or renewal date. After 14 days,
        no refund is given, but you can switch to a cheaper plan with effect from the next renewal.

        ## Consumers in the EU
        If you signed up as a consumer rather than a business, your statutory 14-day right of withdrawal
        also applies.

        ## Processing
        Approved refunds are paid back to the original payment method within 10 business days. Card reader
        hardware is covered by the Globex Tap returns policy, not by this policy.
        """,
    ),
    Doc(
        GLOBEX,
        "warranty-tap-v1",
        "policy",
        "2022-06-01",
        "Globex Tap warranty (2022)",
        """
        The Globex Tap card reader comes with a limited hardware warranty against manufacturing defects.

        ## Period
        The warranty lasts 12 months from the date of purchase.

        ## Exclusions
        The warranty does not cover cracked screens, liquid damage, or batteries that have lost capacity
        through normal use.

        ## Claims
        Contact support with the reader's serial number and proof of purchase. If the fault is confirmed,
        we send a replacement reader within 10 business days.
        """,
    ),
    Doc(
        GLOBEX,
        "warranty-tap-v2",
        "policy",
        "2024-05-01",
        "Globex Tap warranty",
        """
        This warranty applies to Globex Tap card readers bought on or after 1 May 2024. Readers bought
        earlier keep the 12-month warranty that applied when they were sold.

        ## Period
        Globex Tap card readers are covered for 18 months from the date of purchase against manufacturing
        defects.

        ## Exclusions
        Accidental damage such as cracked screens or liquid damage is not covered. The battery is covered
        for 12 months.

        ## Claims
        Start a claim in Settings > Hardware > Report a fault with the reader's serial number. If the fault
        is confirmed, a replacement reader ships within 5 business days and includes a prepaid label for
        returning the faulty one.
        """,
    ),
    Doc(
        GLOBEX,
        "returns-tap",
        "policy",
        "2024-05-01",
        "Globex Tap returns",
        """
        If you change your mind about a Globex Tap card reader, you can return it within 30 days of
        delivery.

        ## Fees
        Unopened readers are refunded in full and we pay return shipping. Opened readers in working
        condition are refunded minus a restocking fee of EUR 10.

        ## How to return
        Request a return label from Settings > Hardware > Return a reader. Pack the reader with its
        charging cable and send it within 7 days of receiving the label. The refund is issued once the
        reader reaches our warehouse in Utrecht.
        """,
    ),
    Doc(
        GLOBEX,
        "shipping-tap",
        "policy",
        "2023-03-01",
        "Globex Tap shipping",
        """
        Globex Tap card readers ship from our warehouse in Utrecht, the Netherlands.

        ## Delivery times
        Orders placed before 15:00 CET on a business day leave the warehouse the same day. Delivery takes 1
        to 2 business days in the Netherlands and Belgium, and 2 to 4 business days elsewhere in the
        European Union.

        ## Cost
        Shipping is free for orders of two or more readers. A single reader ships for EUR 6.95.

        ## Outside the EU
        We do not currently ship card readers outside the European Union, Norway and Switzerland.
        """,
    ),
    Doc(
        GLOBEX,
        "security-2fa",
        "security",
        "2024-03-01",
        "Two-factor authentication",
        """
        From 1 March 2024, two-factor authentication (2FA) is mandatory for every Globex Ledger user. Users
        who have not set it up are asked to do so at their next sign-in.

        ## Methods
        You can use an authenticator app (TOTP) or receive codes by SMS. We recommend an authenticator app,
        because SMS codes can be intercepted.

        ## Setting it up
        Go to Profile > Sign-in and security > Two-factor authentication, scan the QR code with your app
        and enter the 6-digit code. Save the 8 backup codes shown at the end; each code can be used once.

        ## Lost your phone?
        Use a backup code to sign in. If you have no backup codes, contact support: we verify your identity
        with a copy of your ID and restore access within 3 business days.
        """,
    ),
    Doc(
        GLOBEX,
        "security-sso",
        "security",
        "2024-04-01",
        "Single sign-on",
        """
        Single sign-on (SSO) with SAML 2.0 is available on the Ledger Scale plan.

        ## Supported identity providers
        We support Okta, OneLogin and Microsoft Entra ID, and any identity provider that follows the SAML
        2.0 standard. OpenID Connect is not supported yet.

        ## Setup
        An administrator opens Settings > Security > SSO, downloads the Ledger service provider metadata
        and uploads the metadata file from the identity provider. Users are created on first sign-in
        (just-in-time provisioning). Automatic deprovisioning through SCIM is not available; remove leavers
        in Settings > Users.

        ## Two-factor authentication with SSO
        When SSO is enforced, Ledger's own 2FA prompt is skipped and your identity provider's multi-factor
        policy applies.
        """,
    ),
    Doc(
        GLOBEX,
        "security-password-reset-v1",
        "security",
        "2021-10-01",
        "Reset your password (2021)",
        """
        Forgot your password? Click Forgot password on the login page and enter the email address you use
        for Ledger.

        ## Reset link
        We send you a link that is valid for 24 hours.

        ## Requirements
        Your new password needs at least 8 characters.

        ## Still stuck?
        If no email arrives, check your spam folder or contact support at support@globex-ledger.example.
        Support cannot see or send you your current password, but can confirm which email address your
        account uses.
        """,
    ),
    Doc(
        GLOBEX,
        "security-password-reset-v2",
        "security",
        "2024-03-01",
        "Reset your password",
        """
        Click Forgot password on the sign-in page and enter the email address of your Ledger account.

        ## Reset link
        The reset link we email you is valid for 60 minutes and works once. Requesting a new link cancels
        earlier ones.

        ## Requirements
        Your new password must have at least 10 characters and include at least one number. You cannot
        reuse any of your last 5 passwords.

        ## After the reset
        All other sessions are signed out, and you confirm the change with your two-factor code. If your
        company signs in with SSO, reset your password through your identity provider instead.
        """,
    ),
    Doc(
        GLOBEX,
        "security-data-protection",
        "security",
        "2024-01-01",
        "Where your data is stored",
        """
        Globex Ledger stores all customer data in the European Union.

        ## Hosting
        Production data is hosted in Frankfurt, Germany. Encrypted backups are kept in Dublin, Ireland, for
        30 days.

        ## Encryption
        Data is encrypted at rest with AES-256 and in transit with TLS 1.2 or higher. Bank feed credentials
        are stored in a separate vault and are never visible to Globex staff.

        ## Access by staff
        Support staff can open your administration only after you grant access from Settings > Support
        access, and that access expires automatically after 72 hours.
        """,
    ),
    Doc(
        GLOBEX,
        "faq-billing",
        "faq",
        "2024-04-01",
        "Billing FAQ",
        """
        ## How can I pay?
        You can pay by credit card or by SEPA direct debit. Annual Scale subscriptions can also be paid by
        bank transfer.

        ## Why was VAT added to my invoice?
        Prices exclude VAT. Dutch VAT of 21% is added for customers in the Netherlands; businesses
        elsewhere in the EU with a valid VAT number are invoiced with reverse charge.

        ## What happens if a payment fails?
        We retry a failed payment 3 times over 9 days. If all retries fail, the account becomes read-only
        until the balance is paid.

        ## Can I get my money back on an annual plan?
        Annual plans can be refunded in full within 14 days of purchase or renewal. Monthly payments are
        not refunded.
        """,
    ),
    Doc(
        GLOBEX,
        "faq-api",
        "faq",
        "2024-04-01",
        "API FAQ",
        """
        ## Which plans include the API?
        The Ledger API is available on Professional and Scale. Basic does not include API access.

        ## How do I create an API key?
        Go to Settings > Integrations > API keys and choose New key. Keys are shown once, so store them
        safely.

        ## When do the daily limits reset?
        Daily request limits reset at 00:00 UTC. The response headers X-RateLimit-Remaining and
        X-RateLimit-Reset show where you stand.

        ## What happens when I go over?
        Requests over the daily or per-second limit are rejected with HTTP 429 Too Many Requests. They are
        never billed; buy extra capacity blocks if you regularly hit the limit.
        """,
    ),
    Doc(
        GLOBEX,
        "faq-general",
        "faq",
        "2024-02-01",
        "Frequently asked questions",
        """
        ## Can my accountant use Ledger?
        Yes. Every plan includes one free accountant seat that does not count toward your user limit.

        ## Is there a mobile app?
        Yes, Ledger has apps for iOS and Android for sending invoices, scanning receipts and checking your
        bank balance.

        ## Can I export my data?
        You can export invoices, contacts and bookkeeping entries as CSV or as an XAF audit file from
        Settings > Export.

        ## What happens to my data if I cancel?
        Your data stays available read-only for 90 days after cancellation so you can export it, and is
        then deleted.
        """,
    ),
    Doc(
        GLOBEX,
        "marketing-homepage",
        "marketing",
        "2024-04-01",
        "Globex Ledger: bookkeeping that does itself",
        """
        Globex Ledger takes the busywork out of running a small business. Send professional invoices in
        seconds, match payments automatically with your bank, and file VAT returns without the spreadsheet
        gymnastics.

        ## A plan for every stage
        Whether you are a freelancer just starting out or a finance team closing the books for several
        companies, there is a Ledger plan that fits. Upgrade whenever you are ready; your data comes with
        you.

        ## Loved by 60,000 businesses
        Entrepreneurs across the Benelux rate Ledger 4.7 out of 5. Try it free for 30 days, no credit card
        needed.
        """,
    ),
    Doc(
        GLOBEX,
        "marketing-spring-promo",
        "marketing",
        "2023-03-01",
        "Spring offer: half price for three months",
        """
        Spring is the perfect time to get your books in order. Switch to Globex Ledger before 31 May 2023
        and pay half price for your first three months on any paid plan.

        ## Who can use the offer?
        The offer is for new customers who sign up through this page. It cannot be combined with other
        discounts or partner pricing.

        ## Bring your data
        Moving from another bookkeeping tool? Our migration team imports your contacts, open invoices and
        opening balances for free, so you can start invoicing on day one.
        """,
    ),
    Doc(
        GLOBEX,
        "marketing-webinar",
        "marketing",
        "2024-01-10",
        "Webinar: get ready for tax season",
        """
        Join our free webinar on 25 January 2024 at 10:00 CET and learn how to close your year in Ledger
        without stress.

        ## What we cover
        Our in-house accountant walks through reconciling your bank accounts, checking open invoices,
        preparing the annual VAT overview and sharing everything with your accountant in one click.

        ## Who should attend
        The session is aimed at business owners on any Ledger plan and lasts 45 minutes including
        questions. A recording is sent to everyone who registers.
        """,
    ),
    Doc(
        GLOBEX,
        "sla-policy",
        "policy",
        "2024-04-01",
        "Ledger service level agreement",
        """
        Globex commits to a monthly uptime of 99.9% for customers on the Ledger Scale plan. Basic and
        Professional are provided without a formal uptime commitment, although in practice they run on the
        same infrastructure.

        ## Credits
        If monthly uptime on Scale falls below 99.9%, you receive a credit of 5% of the monthly fee for
        every full hour of additional downtime, up to 50% of the monthly fee. Credits are applied to the
        next invoice after you request them.

        ## How to claim
        Email sla@globex-ledger.example within 14 days after the end of the month with the dates and times
        you were affected.
        """,
    ),
    Doc(
        GLOBEX,
        "contract-coo-employment",
        "contract",
        "2023-06-15",
        "Employment agreement: Chief Operating Officer (CONFIDENTIAL)",
        """
        CONFIDENTIAL - Board and HR only. Summary of the employment agreement between Globex B.V. and its
        Chief Operating Officer, Pieter Jansen, effective 15 June 2023.

        ## Severance
        If Globex ends the employment for reasons other than serious misconduct, the COO receives a
        severance payment of 9 months of gross base salary, in addition to the statutory transition
        payment. The payment is made in one lump sum within 30 days of the end date.

        ## Non-compete
        The COO may not work for a competing bookkeeping or payments company in the Benelux for 12 months
        after leaving. Globex pays 50 percent of base salary during that period, referred to in payroll as
        the Heron continuation payment.
        """,
    ),
    Doc(
        GLOBEX,
        "contract-umbrella-partnership",
        "contract",
        "2024-02-01",
        "Partnership agreement: Umbrella Savings Bank (CONFIDENTIAL)",
        """
        CONFIDENTIAL. Summary of the distribution partnership between Globex B.V. and Umbrella Savings Bank
        N.V.

        ## Revenue share
        Umbrella offers Ledger to its business account holders. Globex pays Umbrella a revenue share of 20
        percent of subscription fees from referred customers, and Umbrella pays Globex 0.15 percent of card
        volume processed through Globex Tap readers.

        ## Exclusivity
        Globex will not sign a similar partnership with another bank in the Benelux until 31 January 2027.
        The exclusivity is tracked internally under the code BLUE LANTERN.

        ## Term and renewal
        The initial term is 3 years from 1 February 2024, renewing for 2-year periods unless either party
        gives 6 months' notice.
        """,
    ),
    Doc(
        GLOBEX,
        "contract-soylent-order",
        "contract",
        "2024-04-15",
        "Order form: Soylent Foods Group (CONFIDENTIAL)",
        """
        CONFIDENTIAL - Sales and finance only. Key commercial terms of the order form signed with Soylent
        Foods Group on 15 April 2024.

        ## Plan and discount
        Soylent subscribes to Ledger Scale for 14 legal entities, 4 more than the standard Scale limit,
        paid annually in advance. Soylent receives a discount of 40 percent off Scale list price for the
        first 3 years, approved as exception request GX-DISC-0412.

        ## Renewal
        After the first 3 years the order renews annually at list price minus 20 percent. Either party can
        terminate for convenience with 60 days' written notice before a renewal date.

        ## Service level
        The Scale SLA of 99.9% monthly uptime applies. Soylent's extra API capacity of 4 blocks is included
        at no charge.
        """,
    ),
    Doc(
        GLOBEX,
        "onboarding-guide",
        "faq",
        "2024-01-01",
        "Getting started with Ledger",
        """
        Welcome to Globex Ledger. These four steps get your bookkeeping running in an afternoon.

        ## 1. Add your company details
        Enter your legal name, Chamber of Commerce number and VAT number under Settings > Company. They
        appear on every invoice.

        ## 2. Connect your bank
        Go to Bank > Connect and choose your bank. Transactions from the last 90 days are imported, and new
        ones arrive every night.

        ## 3. Import contacts
        Upload a CSV of customers and suppliers, or import them from your previous bookkeeping tool.

        ## 4. Send your first invoice
        Choose Invoices > New, pick a customer and add lines. Ledger numbers invoices sequentially, as
        Dutch tax rules require.
        """,
    ),
    Doc(
        GLOBEX,
        "cancellation-guide",
        "faq",
        "2024-01-01",
        "Cancel your Ledger subscription",
        """
        The account owner can cancel from Settings > Subscription > Cancel subscription.

        ## When the cancellation takes effect
        Monthly plans end at the end of the current month. Annual plans end at the end of the paid year,
        unless you are still within the 14-day refund window, in which case you can ask for a full refund.

        ## Your data
        After cancellation your administration stays available read-only for 90 days so you can export
        invoices and reports. After 90 days it is permanently deleted. Dutch law requires businesses to
        keep financial records for 7 years, so export before the deadline.
        """,
    ),
    Doc(
        GLOBEX,
        "release-notes-2024",
        "marketing",
        "2024-06-30",
        "What's new in Ledger, 2024",
        """
        ## June 2024
        Recurring invoices can now be paused for up to 3 months. The iOS app supports scanning multi-page
        receipts.

        ## April 2024
        New Professional and Scale plans with higher API limits, annual billing and unlimited users on
        Scale. Extra API capacity is now available as an add-on.

        ## March 2024
        Two-factor authentication became mandatory for all users, and password rules were strengthened.

        ## January 2024
        The refund policy was updated, and cancelled administrations now stay available read-only for 90
        days.
        """,
    ),
]

# --------------------------------------------------------------------------------------------------------
# Tenant "initech": Initech Inc. sells Deskflow, an IT service desk priced per agent, and the Deskflow
# Kiosk walk-up station (USD, based in Austin, Texas).
# --------------------------------------------------------------------------------------------------------
INITECH = "initech"
INITECH_DOCS = [
    Doc(
        INITECH,
        "pricing-team-v1",
        "pricing",
        "2023-07-01",
        "Deskflow Team plan",
        """
        Team is the entry plan for small IT teams that want a shared inbox for requests and a simple
        self-service portal.

        ## Price
        Team costs $12 per agent per month when billed annually, or $15 per agent per month when billed
        monthly. Team is limited to 10 agents.

        ## What is included
        Email and portal channels, a knowledge base with up to 100 articles, 25 automation rules and basic
        reports.

        ## API
        Team includes the Deskflow REST API with a limit of 500 API calls per hour per account.
        """,
    ),
    Doc(
        INITECH,
        "pricing-professional-v1",
        "pricing",
        "2022-04-01",
        "Deskflow Professional plan (April 2022)",
        """
        Deskflow Professional adds service levels, asset tracking and integrations for growing IT
        departments.

        ## Price
        Professional costs $29 per agent per month, billed annually.

        ## What is included
        Unlimited agents, email, portal and chat channels, SLA timers, 100 automation rules and a CMDB for
        up to 5,000 assets.

        ## API
        Professional accounts can make 2,000 API calls per hour.

        ## Support
        Email and chat support on business days from 07:00 to 19:00 US Central.
        """,
    ),
    Doc(
        INITECH,
        "pricing-professional-v2",
        "pricing",
        "2023-05-01",
        "Deskflow Professional plan (May 2023)",
        """
        This page describes Deskflow Professional from 1 May 2023 and replaces the April 2022 version.

        ## Price
        Professional costs $35 per agent per month, billed annually. Monthly billing is available at $42
        per agent per month.

        ## What is included
        Unlimited agents, email, portal, chat and phone channels, SLA timers, 150 automation rules and
        asset management for up to 10,000 assets.

        ## API
        Professional accounts can make 3,000 API calls per hour. Single sign-on can be added for $6 per
        agent per month.
        """,
    ),
    Doc(
        INITECH,
        "pricing-professional-v3",
        "pricing",
        "2024-09-01",
        "Deskflow Professional plan",
        """
        This page describes Deskflow Professional from 1 September 2024. It replaces the May 2023 version;
        customers on annual contracts move to it at renewal.

        ## Price
        Professional costs $39 per agent per month billed annually, or $45 per agent per month billed
        monthly.

        ## What is included
        Unlimited agents, email, portal, chat and phone channels, SLA timers, 250 automation rules,
        AI-assisted ticket triage and asset management for up to 25,000 assets.

        ## API
        Professional accounts can make 6,000 API calls per hour. Bulk endpoints count as one call per 100
        records.

        ## Add-ons
        Single sign-on is available on Professional as an add-on for $4 per agent per month.
        """,
    ),
    Doc(
        INITECH,
        "pricing-enterprise-v1",
        "pricing",
        "2023-05-01",
        "Deskflow Enterprise plan (May 2023)",
        """
        Deskflow Enterprise is for large IT organisations with strict security and compliance needs.

        ## Price
        Enterprise costs $59 per agent per month, billed annually.

        ## What is included
        Everything in Professional, plus single sign-on, a sandbox environment, unlimited assets and audit
        logs kept for 3 years.

        ## API
        Enterprise accounts can make 10,000 API calls per hour.

        ## Support
        24/7 phone support for priority 1 incidents and a named technical account manager.
        """,
    ),
    Doc(
        INITECH,
        "pricing-enterprise-v2",
        "pricing",
        "2024-09-01",
        "Deskflow Enterprise plan",
        """
        This page describes Deskflow Enterprise from 1 September 2024 and replaces the May 2023 version.

        ## Price
        Enterprise costs $69 per agent per month, billed annually. Contracts for 500 agents or more are
        quoted individually.

        ## What is included
        Everything in Professional, plus single sign-on with SCIM provisioning, IP allowlisting, two
        sandbox environments, unlimited assets and audit logs kept for 7 years.

        ## API
        Enterprise accounts can make 20,000 API calls per hour, and higher limits can be agreed in the
        contract.

        ## Support
        24/7 phone support for priority 1 incidents and the 99.95% uptime commitment in the Deskflow SLA.
        """,
    ),
    Doc(
        INITECH,
        "refund-policy-v1",
        "policy",
        "2021-11-01",
        "Refund policy (2021)",
        """
        Initech wants you to be confident when you commit to Deskflow for your service desk.

        ## Annual plans
        Customers who prepay an annual plan can cancel and receive a full refund within 60 days of the
        start of the subscription.

        ## Monthly plans
        Monthly plans can be refunded for the current month if you cancel within 7 days of the charge.

        ## Requests
        Send refund requests to billing@deskflow.example. Refunds are issued within 30 days.
        """,
    ),
    Doc(
        INITECH,
        "refund-policy-v2",
        "policy",
        "2024-02-15",
        "Refund policy",
        """
        This policy applies to Deskflow subscriptions that start or renew on or after 15 February 2024. It
        replaces the 2021 refund policy.

        ## Annual plans
        Annual plans can be cancelled for a full refund within 45 days of the start or renewal date. After
        45 days, annual fees are not refundable, but you can lower the number of agents from your next
        renewal.

        ## Monthly plans
        Monthly plans can be cancelled at any time and are not refunded for the current month.

        ## Removing agents during a term
        If you remove agents during an annual term, the unused amount is kept as account credit for future
        invoices; it is not paid out.

        ## Requests
        Account owners request refunds from Admin > Billing > Request refund. Approved refunds reach the
        original payment method within 10 business days.
        """,
    ),
    Doc(
        INITECH,
        "warranty-kiosk-v1",
        "policy",
        "2022-01-01",
        "Deskflow Kiosk warranty (2022)",
        """
        The Deskflow Kiosk K1 walk-up station is covered by a limited warranty against defects in materials
        and workmanship.

        ## Period
        The warranty lasts 12 months from the date of shipment. Accessories such as barcode scanners and
        badge readers are covered for 90 days.

        ## Service
        Faulty kiosks are repaired at our depot in Austin, Texas. The customer pays shipping to the depot;
        we pay return shipping. Repairs take about 10 business days.
        """,
    ),
    Doc(
        INITECH,
        "warranty-kiosk-v2",
        "policy",
        "2024-08-01",
        "Deskflow Kiosk warranty",
        """
        This warranty applies to Deskflow Kiosk K2 stations shipped on or after 1 August 2024.

        ## Period
        The Kiosk K2 is covered for 36 months from the date of shipment. Accessories such as barcode
        scanners and badge readers are covered for 12 months.

        ## Service
        If a kiosk fails, open a hardware case in Admin > Devices. We ship an advance replacement within 3
        business days, with a prepaid label to return the faulty unit. Kiosks that are not returned within
        30 days are invoiced at $1,450.

        ## Not covered
        Screen damage from impact, liquid damage and kiosks that have been opened by anyone other than
        Initech service staff.
        """,
    ),
    Doc(
        INITECH,
        "returns-policy",
        "policy",
        "2024-08-01",
        "Hardware returns",
        """
        Deskflow Kiosk stations and accessories can be returned within 21 days of delivery if you change
        your mind.

        ## Conditions
        Hardware must be returned in its original packaging with all cables and mounting brackets. Returned
        kiosks are refunded minus a restocking fee of $150 per kiosk. Accessories are refunded in full if
        unopened.

        ## RMA
        Request a return merchandise authorisation from Admin > Devices > Return hardware. Returns that
        arrive without an RMA number are refused.
        """,
    ),
    Doc(
        INITECH,
        "shipping-kiosk",
        "policy",
        "2024-08-01",
        "Kiosk shipping and installation",
        """
        Deskflow Kiosk K2 stations ship from Austin, Texas, on a pallet by freight carrier.

        ## Delivery
        Delivery within the continental United States takes 5 to 7 business days. Shipping costs $120 per
        kiosk; orders of 10 or more kiosks ship free.

        ## Installation
        Each kiosk needs a standard power outlet and a wired network port. Optional on-site installation by
        an Initech technician costs $300 per visit and covers up to 4 kiosks at one address.
        """,
    ),
    Doc(
        INITECH,
        "security-2fa",
        "security",
        "2024-05-01",
        "Two-factor authentication for agents",
        """
        Two-factor authentication (2FA) is strongly recommended for every agent and required for
        administrators.

        ## Supported methods
        Deskflow supports authenticator apps (TOTP), WebAuthn security keys and push approval through the
        Deskflow mobile app. SMS is not offered.

        ## Enforcing 2FA by role
        Administrators can require 2FA for any role under Admin > Security > Authentication policy.
        Accounts with the Administrator role always need 2FA, on every plan.

        ## Backup codes
        Each agent receives 12 single-use backup codes when 2FA is enabled. An administrator can reset an
        agent's 2FA from Admin > Agents, after which the agent sets it up again at the next sign-in.
        """,
    ),
    Doc(
        INITECH,
        "security-sso",
        "security",
        "2024-09-01",
        "Single sign-on for Deskflow",
        """
        Deskflow supports single sign-on with SAML 2.0 and OpenID Connect. SSO is included on Enterprise
        and can be added to Professional for $4 per agent per month. It is not available on Team.

        ## Setup
        In Admin > Security > Single sign-on, add a new identity provider, paste its metadata URL and map
        the email attribute. Test with one agent before enforcing SSO for all agents.

        ## Provisioning
        On Enterprise, SCIM 2.0 provisioning creates, updates and deactivates agents automatically. On
        Professional, agents are created at first sign-in.

        ## End users
        Requesters who use the self-service portal can sign in with SSO too, using a separate identity
        provider if you wish.
        """,
    ),
    Doc(
        INITECH,
        "security-password-reset",
        "security",
        "2024-05-01",
        "Reset an agent password",
        """
        Agents who forget their password choose Forgot password on the sign-in page and enter their work
        email.

        ## Reset link
        The reset link is valid for 15 minutes. If 2FA is enabled, the agent must also enter a current 2FA
        code before choosing the new password.

        ## Password rules
        Passwords must be at least 14 characters long. Deskflow checks new passwords against known breached
        password lists and rejects matches.

        ## Lockout
        After 10 failed sign-in attempts, the account is locked for 30 minutes. Administrators can unlock
        it sooner from Admin > Agents.
        """,
    ),
    Doc(
        INITECH,
        "security-ip-allowlist",
        "security",
        "2024-09-01",
        "IP allowlisting",
        """
        IP allowlisting restricts agent sign-ins to your corporate networks. It is available on the
        Enterprise plan.

        ## Setting up the allowlist
        Under Admin > Security > IP allowlist, add up to 50 IPv4 or IPv6 ranges in CIDR notation. Changes
        apply within 5 minutes.

        ## What is restricted
        The allowlist applies to agents and to API keys. Requesters using the self-service portal are not
        restricted, so employees can still open tickets from home.

        ## Avoiding lockouts
        Deskflow will not save an allowlist that excludes the IP address of the administrator making the
        change.
        """,
    ),
    Doc(
        INITECH,
        "faq-billing",
        "faq",
        "2024-09-01",
        "Billing FAQ",
        """
        ## How are agents counted?
        You pay for each full agent seat. Light agents, who can only view tickets and add internal notes,
        are free on Professional and Enterprise.

        ## Can we pay by invoice?
        Annual plans over $5,000 can be paid by invoice with 30-day terms. We can add your purchase order
        number to invoices.

        ## Can I get a refund if we cancel an annual plan?
        Yes, within 45 days of the start or renewal date you get a full refund. After that, you can reduce
        agents at renewal instead.

        ## Do contracts renew automatically?
        Annual plans renew automatically for another year. To cancel the renewal, tell us at least 30 days
        before the renewal date, unless your signed agreement says otherwise.
        """,
    ),
    Doc(
        INITECH,
        "faq-tickets",
        "faq",
        "2024-03-01",
        "Tickets FAQ",
        """
        ## Which channels can create tickets?
        Team accounts receive tickets by email and through the self-service portal. Professional and
        Enterprise add chat and phone channels.

        ## How do SLA timers work?
        An SLA policy sets first-response and resolution targets by priority. Timers pause while a ticket
        waits for the requester, and agents see a warning 30 minutes before a breach.

        ## Can tickets be merged?
        Yes. Select two or more tickets and choose Merge. The oldest ticket keeps its number and the others
        are closed with a link to it.
        """,
    ),
    Doc(
        INITECH,
        "faq-api",
        "faq",
        "2024-09-01",
        "API FAQ",
        """
        ## How are API limits counted?
        Limits are counted per account per rolling hour, across all API keys. Bulk endpoints count as one
        call per 100 records.

        ## What happens when we hit the limit?
        Further calls receive HTTP 429 with a Retry-After header. Calls are never billed as overage;
        upgrade or ask for a higher Enterprise limit if you hit it regularly.

        ## How do I create an API key?
        Administrators create keys under Admin > Integrations > API keys. A key inherits the permissions of
        the agent who created it.

        ## Is there a sandbox?
        Enterprise includes two sandbox environments. Sandbox calls count toward a separate allowance of
        2,000 calls per hour.
        """,
    ),
    Doc(
        INITECH,
        "marketing-homepage",
        "marketing",
        "2024-09-01",
        "Deskflow: the service desk your IT team will actually like",
        """
        Deskflow brings every IT request, asset and change into one calm, fast workspace. Employees get
        answers from the self-service portal, and agents spend their time on the problems that matter.

        ## Pricing that scales with your team
        Start small with Team, grow into Professional as your processes mature, and move to Enterprise when
        security reviews get serious. Every plan is priced per agent, with no surprise fees.

        ## Try it free
        Start a 21-day trial with all Professional features, or book a live walkthrough with our solutions
        team.
        """,
    ),
    Doc(
        INITECH,
        "marketing-ai-triage",
        "marketing",
        "2024-09-05",
        "Blog: meet AI triage",
        """
        Ticket queues grow faster than IT teams do. That is why we built AI triage, now part of Deskflow
        Professional and Enterprise.

        ## How it works
        When a ticket arrives, AI triage suggests a category, a priority and the best group to handle it,
        based on how your team handled similar tickets before. Agents accept a suggestion with one click,
        or correct it, and Deskflow learns from the correction.

        ## Early results
        Teams in the beta cut the average time to first assignment from 47 minutes to 9 minutes. Triage
        suggestions run inside your Deskflow account and your ticket data is not used to train models for
        other customers.
        """,
    ),
    Doc(
        INITECH,
        "marketing-comparison",
        "marketing",
        "2024-02-01",
        "Deskflow compared with legacy help desks",
        """
        Legacy help desk tools were built for a world of desk phones and on-premise servers. Deskflow was
        built for hybrid teams.

        ## Setup in days, not months
        Most teams import their tickets and assets and go live within a week. There are no servers to
        patch and no consultants required.

        ## Transparent plans
        Legacy vendors hide prices behind sales calls and charge extra for basics like APIs and asset
        tracking. With Deskflow, plans are published, priced per agent and include API access on every
        tier.
        """,
    ),
    Doc(
        INITECH,
        "sla-policy",
        "policy",
        "2024-09-01",
        "Deskflow service level agreement",
        """
        Initech commits to the following monthly uptime for the Deskflow service: 99.9% on Professional and
        99.95% on Enterprise. Team has no uptime commitment.

        ## Service credits
        If we miss the commitment, you receive a service credit of 10% of the monthly fee when uptime is
        below the commitment but at least 99.0%, and 25% when uptime falls below 99.0%.

        ## Claims
        Request credits within 30 days after the end of the month from Admin > Billing > SLA credit.
        Credits are not paid out in cash.
        """,
    ),
    Doc(
        INITECH,
        "data-retention",
        "policy",
        "2024-03-01",
        "Data retention",
        """
        Deskflow keeps tickets, assets and knowledge articles for as long as your subscription is active.

        ## Audit logs
        Audit logs are kept for 1 year on Team and Professional, and for 7 years on Enterprise.

        ## After cancellation
        When a subscription ends, data remains available for export for 60 days. After 60 days, all
        tickets, attachments and agent records are permanently deleted, and backups roll off within a
        further 14 days.

        ## Deleting personal data
        Administrators can permanently delete a requester and all their tickets from Admin > Privacy to
        answer erasure requests.
        """,
    ),
    Doc(
        INITECH,
        "contract-cto-employment",
        "contract",
        "2024-01-08",
        "Executive agreement: Chief Technology Officer (CONFIDENTIAL)",
        """
        CONFIDENTIAL - Compensation committee only. Summary of the executive agreement between Initech Inc.
        and its Chief Technology Officer, Priya Raman, effective 8 January 2024.

        ## Severance
        If Initech terminates the CTO without cause, or the CTO resigns for good reason, the CTO receives 6
        months of base salary and a pro-rated annual bonus.

        ## Double-trigger acceleration
        If the CTO's employment ends without cause within 18 months after a change of control, 100 percent
        of unvested stock options vest immediately. The board refers to this provision as the Swordfish
        clause.

        ## Non-solicitation
        For 12 months after leaving, the CTO will not recruit Initech employees.
        """,
    ),
    Doc(
        INITECH,
        "contract-vandelay-msa",
        "contract",
        "2024-03-01",
        "Enterprise agreement: Vandelay Industries (CONFIDENTIAL)",
        """
        CONFIDENTIAL. Key terms of the Deskflow Enterprise agreement with Vandelay Industries, signed 1
        March 2024.

        ## Scope and discount
        Vandelay licenses Deskflow Enterprise for 2,000 agents. Vandelay pays $38.35 per agent per month, a
        35 percent discount off the Enterprise list price in effect at signing, under pricing schedule
        VDL-35-ALPHA.

        ## Term and renewal
        The initial term is 24 months. Renewals are for 12 months, and the price increase at each renewal
        is capped at 3 percent. Vandelay must give 120 days' written notice to stop a renewal.

        ## API and service level
        Vandelay's API limit is raised to 40,000 API calls per hour. The Enterprise SLA of 99.95% applies,
        with credits doubled for priority 1 outages.
        """,
    ),
    Doc(
        INITECH,
        "contract-bluepeak-msp",
        "contract",
        "2024-06-01",
        "MSP partner agreement: Bluepeak IT (CONFIDENTIAL)",
        """
        CONFIDENTIAL. Summary of the managed service provider agreement between Initech Inc. and Bluepeak IT
        Services LLC.

        ## Wholesale pricing
        Bluepeak resells Deskflow to its clients at its own prices and pays Initech a wholesale rate of 45
        percent off list price. Bluepeak must keep at least 500 paid agents across its clients; below that,
        the wholesale discount falls to 30 percent.

        ## Support
        Bluepeak handles first-line support for its clients. Initech answers Bluepeak's escalations within 4
        business hours.

        ## Term
        The agreement runs for 12 months from 1 June 2024 and renews automatically unless either party
        gives 30 days' notice. Internal deal reference: MSP-PINECONE-4490.
        """,
    ),
    Doc(
        INITECH,
        "onboarding-guide",
        "faq",
        "2024-03-01",
        "Set up Deskflow in a day",
        """
        Follow these steps to take your service desk live in a single working day.

        ## Connect your support mailbox
        Forward your support address, for example it-help@yourcompany.example, to the inbound address shown
        in Admin > Channels > Email. Replies go out from your own address once you verify the domain.

        ## Invite agents
        Add agents from Admin > Agents and assign them to groups such as Service Desk or Network. Agents
        receive an invitation valid for 7 days.

        ## Publish the portal
        Turn on the self-service portal, add your logo and publish five to ten knowledge articles that
        answer your most common requests, such as resetting a VPN token.
        """,
    ),
    Doc(
        INITECH,
        "release-notes-2024",
        "marketing",
        "2024-09-15",
        "Deskflow release notes 2024",
        """
        ## September 2024
        New Professional and Enterprise plans with higher API limits. AI triage is available on
        Professional and Enterprise, and Enterprise gains a second sandbox.

        ## August 2024
        The Deskflow Kiosk K2 launched with a longer warranty and advance replacement.

        ## May 2024
        Push approval through the mobile app is now a supported 2FA method. Password rules now require 14
        characters.

        ## February 2024
        Refund requests moved into Admin > Billing, and the refund policy was updated.
        """,
    ),
    Doc(
        INITECH,
        "cancellation-guide",
        "faq",
        "2024-02-15",
        "Cancel Deskflow",
        """
        Only the account owner can cancel a Deskflow subscription, from Admin > Billing > Cancel
        subscription.

        ## Timing
        Monthly plans stop at the end of the current month. Annual plans stop at the end of the term; if
        you cancel within 45 days of the start or renewal date, you can also request a full refund.

        ## Your data
        After the subscription ends, you have 60 days to export tickets, assets and articles from Admin >
        Export. Then all data is permanently deleted.

        ## Kiosks
        Kiosks you bought stay yours, but they show an offline screen once the subscription ends.
        """,
    ),
]

DOCS = ACME_DOCS + GLOBEX_DOCS + INITECH_DOCS

# --------------------------------------------------------------------------------------------------------
# Golden cases. Grades: 3 authoritative and complete, 2 relevant and helpful, 1 related but not
# sufficient, 0 judged irrelevant or superseded. Evidence spans quote the sentence(s) that answer.
# --------------------------------------------------------------------------------------------------------
ACME_PRO_API = "The Professional plan includes 50,000 API calls per month, with a burst limit of 120 requests per minute."
ACME_ANNUAL_REFUND = "Annual subscriptions can be refunded in full within 30 days of purchase or renewal."
ACME_ANNUAL_REFUND_FAQ = "Yes, within 30 days of purchase or renewal you get a full refund."
ACME_WARRANTY = "Fieldsense hardware is covered for 24 months from the date of delivery."
ACME_WARRANTY_FAQ = "Gateways and sensors delivered since 1 February 2024 are covered for 24 months."
ACME_SLA_CREDITS = (
    "For every 0.1 percentage point of monthly uptime below the commitment, you receive a credit of 10% of "
    "that month's subscription fee, up to a maximum of 30%."
)
ACME_CASES = [
    Case(
        "acme-pricing-001",
        ACME,
        "What is the monthly API limit for the Professional plan?",
        {"pricing-professional-v3": 3, "faq-api": 1, "marketing-pro-launch": 1, "pricing-professional-v2": 0},
        [("pricing-professional-v3", ACME_PRO_API)],
        "50,000 API calls per month, with a burst limit of 120 requests per minute.",
        ["pricing", "api"],
    ),
    Case(
        "acme-pricing-002",
        ACME,
        "pro plan api limit how much?",
        {"pricing-professional-v3": 3, "marketing-pro-launch": 1, "pricing-professional-v2": 0},
        [("pricing-professional-v3", ACME_PRO_API)],
        "50,000 API calls per month.",
        ["pricing", "api", "colloquial"],
    ),
    Case(
        "acme-pricing-003",
        ACME,
        "How much does the Professional plan cost per site if we pay annually?",
        {"pricing-professional-v3": 3, "marketing-homepage": 0, "pricing-professional-v2": 0},
        [
            (
                "pricing-professional-v3",
                "Professional costs $99 per site per month when billed monthly, or $89 per site per month "
                "when billed annually.",
            )
        ],
        "$89 per site per month billed annually ($99 when billed monthly).",
        ["pricing"],
    ),
    Case(
        "acme-pricing-004",
        ACME,
        "How many sensors can one Starter site connect?",
        {"pricing-starter-v2": 3, "pricing-starter-v1": 0},
        [
            (
                "pricing-starter-v2",
                "Each Starter site can connect up to 10 sensors through one gateway, and readings are kept "
                "for 90 days.",
            )
        ],
        "Up to 10 sensors per site, through one gateway.",
        ["pricing"],
    ),
    Case(
        "acme-pricing-005",
        ACME,
        "what hapens when starter runs out of api calls",
        {"pricing-starter-v2": 3, "faq-api": 2, "pricing-starter-v1": 0},
        [
            (
                "pricing-starter-v2",
                "Starter is hard-capped: once the monthly allowance is used, further calls return HTTP 429 "
                "until the allowance resets on the first day of the next billing cycle.",
            ),
            ("faq-api", "On Starter, further calls are rejected with HTTP 429 until the allowance resets."),
        ],
        "Further calls are rejected with HTTP 429 until the allowance resets at the next billing cycle; "
        "Starter has no overage billing.",
        ["pricing", "api", "misspelled", "colloquial"],
    ),
    Case(
        "acme-pricing-006",
        ACME,
        "Which Fieldsense plan do we need for single sign-on?",
        {"security-sso": 3, "pricing-enterprise-v1": 2, "marketing-homepage": 0},
        [
            ("security-sso", "SSO is available on the Enterprise plan only."),
            (
                "pricing-enterprise-v1",
                "Single sign-on (SAML 2.0 or OIDC) and SCIM user provisioning are included only on "
                "Enterprise.",
            ),
        ],
        "Enterprise; SSO is not available on Starter or Professional.",
        ["pricing", "security", "sso"],
    ),
    Case(
        "acme-pricing-007",
        ACME,
        "What is the overage price for extra API calls on Professional?",
        {"pricing-professional-v3": 3, "faq-api": 2, "pricing-professional-v2": 0},
        [
            (
                "pricing-professional-v3",
                "Calls above the monthly allowance are not rejected; they are billed as overage at $4 per "
                "additional 1,000 calls.",
            ),
            ("faq-api", "On Professional, calls continue and are billed as overage."),
        ],
        "$4 per additional 1,000 calls above the monthly allowance.",
        ["pricing", "api"],
    ),
    Case(
        "acme-refund-001",
        ACME,
        "What is the refund window for an annual plan?",
        {"refund-policy-v2": 3, "faq-billing": 2, "cancellation-guide": 1, "refund-policy-v1": 0},
        [("refund-policy-v2", ACME_ANNUAL_REFUND), ("faq-billing", ACME_ANNUAL_REFUND_FAQ)],
        "Full refund within 30 days of purchase or renewal; from day 31 to day 90, unused whole months minus "
        "a 10% fee; nothing after day 90.",
        ["refund"],
    ),
    Case(
        "acme-refund-002",
        ACME,
        "refnud window for anual plan",
        {"refund-policy-v2": 3, "faq-billing": 2, "refund-policy-v1": 0},
        [("refund-policy-v2", ACME_ANNUAL_REFUND), ("faq-billing", ACME_ANNUAL_REFUND_FAQ)],
        "30 days for a full refund (prorated minus 10% until day 90).",
        ["refund", "misspelled", "colloquial"],
    ),
    Case(
        "acme-refund-003",
        ACME,
        "Can I still get a refund on a monthly subscription two weeks after the first charge?",
        {"refund-policy-v2": 3, "cancellation-guide": 1, "refund-policy-v1": 0},
        [
            (
                "refund-policy-v2",
                "Monthly subscriptions can be refunded in full within 7 days of the first charge. After "
                "that, you can cancel at any time and the plan stays active until the end of the paid "
                "month, but no partial refund is given.",
            )
        ],
        "No. Monthly subscriptions are refundable only within 7 days of the first charge.",
        ["refund"],
    ),
    Case(
        "acme-returns-001",
        ACME,
        "Is there a restocking fee if I return an opened gateway?",
        {"returns-policy": 3, "refund-policy-v2": 0},
        [("returns-policy", "Opened hardware in working condition is refunded minus a 15% restocking fee.")],
        "Yes, 15% for opened hardware in working condition, returned within 30 days of delivery with an "
        "RMA number.",
        ["returns", "hardware"],
    ),
    Case(
        "acme-warranty-001",
        ACME,
        "How long is the warranty on Fieldsense enterprise hardware?",
        {"warranty-policy-v2": 3, "faq-hardware": 2, "release-notes-2024": 1, "warranty-policy-v1": 0},
        [
            (
                "warranty-policy-v2",
                ACME_WARRANTY + " This applies to all plans, including Enterprise deployments.",
            ),
            ("faq-hardware", ACME_WARRANTY_FAQ),
        ],
        "24 months from delivery, on all plans including Enterprise.",
        ["warranty", "hardware"],
    ),
    Case(
        "acme-warranty-002",
        ACME,
        "my gateway died after 14 months, is it still under warranty??",
        {"warranty-policy-v2": 3, "faq-hardware": 2, "warranty-policy-v1": 0},
        [
            (
                "warranty-policy-v2",
                "This warranty applies to Fieldsense gateways and sensors delivered on or after 1 February "
                "2024 and replaces the legacy 12-month warranty.",
            ),
            ("warranty-policy-v2", ACME_WARRANTY),
            (
                "faq-hardware",
                ACME_WARRANTY_FAQ
                + " Devices delivered earlier keep the 12-month warranty they were sold with.",
            ),
        ],
        "Yes if it was delivered on or after 1 February 2024 (24-month warranty); devices delivered earlier "
        "keep the 12-month warranty.",
        ["warranty", "hardware", "colloquial"],
    ),
    Case(
        "acme-warranty-003",
        ACME,
        "How fast do Enterprise customers get a replacement for a faulty sensor?",
        {"warranty-policy-v2": 3, "warranty-policy-v1": 0},
        [
            (
                "warranty-policy-v2",
                "Enterprise customers receive an advance replacement shipped within 2 business days; other "
                "customers receive a repaired or replacement device within 10 business days of us receiving "
                "the faulty unit.",
            )
        ],
        "An advance replacement is shipped within 2 business days.",
        ["warranty", "hardware"],
    ),
    Case(
        "acme-security-001",
        ACME,
        "How do I enable two-factor authentication?",
        {"security-2fa-v2": 3, "security-password-reset": 1, "security-2fa-v1": 0},
        [
            (
                "security-2fa-v2",
                "Go to Settings > Security > Two-factor authentication and select Enable. Scan the QR code "
                "with an authenticator app such as Google Authenticator, 1Password or Authy, then type the "
                "6-digit code to confirm.",
            )
        ],
        "Settings > Security > Two-factor authentication > Enable, scan the QR code with an authenticator "
        "app and confirm the 6-digit code (or register a WebAuthn key).",
        ["security", "2fa"],
    ),
    Case(
        "acme-security-002",
        ACME,
        "can i get my 2fa codes by text message",
        {"security-2fa-v2": 3, "security-2fa-v1": 0},
        [
            (
                "security-2fa-v2",
                "Since 1 August 2023, SMS codes are no longer supported because of SIM-swap attacks.",
            )
        ],
        "No. SMS codes are not supported since 1 August 2023; use an authenticator app or a WebAuthn key.",
        ["security", "2fa", "colloquial"],
    ),
    Case(
        "acme-security-003",
        ACME,
        "How long is the password reset link valid?",
        {"security-password-reset": 3, "security-sso": 0},
        [
            (
                "security-password-reset",
                "We email a reset link that expires after 30 minutes and can only be used once.",
            )
        ],
        "30 minutes, and it can be used only once.",
        ["security", "password"],
    ),
    Case(
        "acme-security-004",
        ACME,
        "how many backup codes do i get with 2fa",
        {"security-2fa-v2": 3, "security-2fa-v1": 0},
        [("security-2fa-v2", "After setup you receive 10 single-use backup codes.")],
        "10 single-use backup codes.",
        ["security", "2fa", "colloquial"],
    ),
    Case(
        "acme-security-005",
        ACME,
        "configure singel sign on with okta",
        {"security-sso": 3, "pricing-enterprise-v1": 1},
        [
            (
                "security-sso",
                "In Settings > Security > Single sign-on, choose SAML and copy the Assertion Consumer "
                "Service URL and Entity ID into your identity provider.",
            )
        ],
        "Settings > Security > Single sign-on, choose SAML, copy the ACS URL and Entity ID into Okta, upload "
        "Okta's metadata XML and test the connection (Enterprise plan only).",
        ["security", "sso", "misspelled"],
    ),
    Case(
        "acme-sla-001",
        ACME,
        "What service credit do we get when uptime falls below the commitment?",
        {"sla-policy": 3, "pricing-enterprise-v1": 1},
        [("sla-policy", ACME_SLA_CREDITS)],
        "10% of the month's fee for every 0.1 percentage point below the commitment, capped at 30%.",
        ["sla"],
    ),
    Case(
        "acme-contract-001",
        ACME,
        "What discount does Northwind Logistics get?",
        {"contract-northwind-msa": 3, "pricing-enterprise-v1": 1},
        [
            (
                "contract-northwind-msa",
                "Northwind receives a discount of 27 percent off Enterprise list pricing for the initial "
                "term, recorded internally as price-protection rider AC-7731.",
            )
        ],
        "27 percent off Enterprise list pricing for the initial term.",
        ["contract", "confidential", "pricing"],
    ),
    Case(
        "acme-contract-002",
        ACME,
        "When does the Northwind agreement renew and how much notice stops the renewal?",
        {"contract-northwind-msa": 3, "faq-billing": 1},
        [
            (
                "contract-northwind-msa",
                "The agreement then renews automatically for successive 12-month periods unless either "
                "party gives written notice at least 90 days before the end of the current term.",
            )
        ],
        "After the 36-month initial term from 1 April 2024 it renews for 12-month periods; written notice "
        "at least 90 days before the end of the term stops it.",
        ["contract", "confidential", "renewal"],
    ),
    Case(
        "acme-contract-003",
        ACME,
        "What uptime and service credits apply to the Northwind contract?",
        {"contract-northwind-msa": 3, "sla-policy": 2},
        [
            (
                "contract-northwind-msa",
                "The standard Enterprise SLA of 99.95% monthly uptime applies, with service credits "
                "calculated as in the Fieldsense SLA.",
            ),
            ("sla-policy", ACME_SLA_CREDITS),
        ],
        "99.95% monthly uptime; 10% credit per 0.1 percentage point below it, capped at 30%.",
        ["contract", "confidential", "sla"],
    ),
    Case(
        "acme-contract-004",
        ACME,
        "What are the confidential severance clauses?",
        {"contract-cfo-employment": 3},
        [
            (
                "contract-cfo-employment",
                "If the company terminates the CFO's employment without cause, the CFO receives severance "
                "equal to 12 months of base salary, paid in equal monthly instalments, plus 18 months of "
                "company-paid health coverage.",
            )
        ],
        "The CFO gets 12 months of base salary plus 18 months of company-paid health coverage if terminated "
        "without cause (subject to a release of claims).",
        ["contract", "confidential", "severance"],
    ),
    Case(
        "acme-data-001",
        ACME,
        "How long is our data kept after we cancel?",
        {"data-retention": 3, "cancellation-guide": 2},
        [
            (
                "data-retention",
                "When a subscription ends, the workspace becomes read-only for 30 days so you can export "
                "your data. After those 30 days, all readings, alerts and user records are permanently "
                "deleted.",
            ),
            (
                "cancellation-guide",
                "Gateways stop uploading readings at the end of the period, and the workspace becomes "
                "read-only for 30 days so you can export your data.",
            ),
        ],
        "The workspace stays read-only for 30 days for export, then all data is permanently deleted "
        "(backups roll off within 35 days).",
        ["data-retention"],
    ),
    Case(
        "acme-unanswerable-001",
        ACME,
        "Does Fieldsense offer a discount for non-profit organisations?",
        {"pricing-enterprise-v1": 0, "marketing-homepage": 0},
        [],
        None,
        ["pricing"],
    ),
    Case(
        "acme-unanswerable-002",
        ACME,
        "What is the daily API request limit on the Scale plan?",
        {"pricing-professional-v3": 0, "pricing-enterprise-v1": 0},
        [],
        None,
        ["pricing", "api", "cross-tenant-trap"],
    ),
    Case(
        "acme-unanswerable-003",
        ACME,
        "Are Fieldsense sensors ATEX certified for explosive atmospheres?",
        {"faq-hardware": 0},
        [],
        None,
        ["hardware"],
    ),
]

GLOBEX_PRO_API = (
    "The Ledger API is included with a limit of 10,000 API requests per day and 10 requests per second."
)
GLOBEX_ANNUAL_REFUND = "Annual plans can be refunded in full within 14 days of the purchase or renewal date."
GLOBEX_ANNUAL_REFUND_FAQ = "Annual plans can be refunded in full within 14 days of purchase or renewal."
GLOBEX_CASES = [
    Case(
        "globex-pricing-001",
        GLOBEX,
        "What is the daily API request limit on Ledger Professional?",
        {
            "pricing-professional-v2": 3,
            "faq-api": 1,
            "pricing-addons": 1,
            "pricing-professional-v1": 0,
        },
        [("pricing-professional-v2", GLOBEX_PRO_API)],
        "10,000 API requests per day and 10 requests per second.",
        ["pricing", "api"],
    ),
    Case(
        "globex-pricing-002",
        GLOBEX,
        "pro plan api limit how much?",
        {"pricing-professional-v2": 3, "pricing-addons": 1, "pricing-professional-v1": 0},
        [("pricing-professional-v2", GLOBEX_PRO_API)],
        "10,000 requests per day (10 per second).",
        ["pricing", "api", "colloquial"],
    ),
    Case(
        "globex-pricing-003",
        GLOBEX,
        "Does the Basic plan include API access?",
        {"pricing-basic-v1": 3, "faq-api": 2, "marketing-homepage": 0},
        [
            (
                "pricing-basic-v1",
                "API access is not included on Basic; to connect your own software you need Professional "
                "or Scale.",
            ),
            (
                "faq-api",
                "The Ledger API is available on Professional and Scale. Basic does not include API access.",
            ),
        ],
        "No. The API is only available on Professional and Scale.",
        ["pricing", "api"],
    ),
    Case(
        "globex-pricing-004",
        GLOBEX,
        "how much is scale per month now",
        {"pricing-scale-v2": 3, "pricing-scale-v1": 0},
        [("pricing-scale-v2", "Scale costs EUR 229 per month, or EUR 2,290 per year when paid annually.")],
        "EUR 229 per month excluding VAT (EUR 2,290 per year when paid annually).",
        ["pricing", "colloquial"],
    ),
    Case(
        "globex-pricing-005",
        GLOBEX,
        "How many users are included in Ledger Professional, and what does an extra user cost?",
        {"pricing-professional-v2": 3, "pricing-addons": 2, "pricing-professional-v1": 0},
        [
            (
                "pricing-professional-v2",
                "Professional includes 5 users, unlimited invoices, bank feeds for 10 bank accounts, "
                "multi-currency invoicing and recurring invoices.",
            ),
            ("pricing-addons", "Additional users on Professional cost EUR 8 per user per month."),
        ],
        "5 users are included; each additional user costs EUR 8 per month.",
        ["pricing"],
    ),
    Case(
        "globex-pricing-006",
        GLOBEX,
        "how much for extra api capasity blocks",
        {"pricing-addons": 3, "pricing-professional-v2": 1},
        [
            (
                "pricing-addons",
                "Extra API capacity is sold in blocks of 5,000 requests per day for EUR 15 per month per "
                "block.",
            )
        ],
        "EUR 15 per month for each block of 5,000 extra requests per day.",
        ["pricing", "api", "misspelled", "colloquial"],
    ),
    Case(
        "globex-api-001",
        GLOBEX,
        "When do the daily API limits reset?",
        {
            "faq-api": 3,
            "pricing-professional-v2": 2,
            "pricing-scale-v2": 2,
            "pricing-professional-v1": 0,
        },
        [
            ("faq-api", "Daily request limits reset at 00:00 UTC."),
            ("pricing-professional-v2", "Daily limits reset at 00:00 UTC."),
            ("pricing-scale-v2", "Daily limits reset at 00:00 UTC."),
        ],
        "At 00:00 UTC every day.",
        ["api"],
    ),
    Case(
        "globex-refund-001",
        GLOBEX,
        "What is the refund window for annual plans?",
        {"refund-policy-v2": 3, "faq-billing": 2, "cancellation-guide": 1, "refund-policy-v1": 0},
        [("refund-policy-v2", GLOBEX_ANNUAL_REFUND), ("faq-billing", GLOBEX_ANNUAL_REFUND_FAQ)],
        "14 days from the purchase or renewal date for a full refund; no refund after that.",
        ["refund"],
    ),
    Case(
        "globex-refund-002",
        GLOBEX,
        "can i get a refnud for a monthly plan i barely used",
        {"refund-policy-v2": 3, "faq-billing": 2, "refund-policy-v1": 0},
        [
            ("refund-policy-v2", "Monthly payments are not refunded, including for partly used months."),
            ("faq-billing", "Monthly payments are not refunded."),
        ],
        "No. Monthly payments are not refunded, even for partly used months (consumers keep the statutory "
        "14-day withdrawal right).",
        ["refund", "misspelled", "colloquial"],
    ),
    Case(
        "globex-refund-003",
        GLOBEX,
        "How long does it take for an approved refund to arrive?",
        {"refund-policy-v2": 3, "returns-tap": 1, "refund-policy-v1": 0},
        [
            (
                "refund-policy-v2",
                "Approved refunds are paid back to the original payment method within 10 business days.",
            )
        ],
        "Within 10 business days, to the original payment method.",
        ["refund"],
    ),
    Case(
        "globex-warranty-001",
        GLOBEX,
        "How long is the warranty on the Globex Tap card reader?",
        {"warranty-tap-v2": 3, "returns-tap": 1, "warranty-tap-v1": 0},
        [
            (
                "warranty-tap-v2",
                "Globex Tap card readers are covered for 18 months from the date of purchase against "
                "manufacturing defects.",
            )
        ],
        "18 months from purchase for readers bought on or after 1 May 2024 (battery 12 months); readers "
        "bought earlier keep 12 months.",
        ["warranty", "hardware"],
    ),
    Case(
        "globex-warranty-002",
        GLOBEX,
        "card reader screen cracked, is that covered",
        {"warranty-tap-v2": 3, "returns-tap": 1, "warranty-tap-v1": 0},
        [
            (
                "warranty-tap-v2",
                "Accidental damage such as cracked screens or liquid damage is not covered.",
            )
        ],
        "No, accidental damage such as a cracked screen is not covered by the warranty.",
        ["warranty", "hardware", "colloquial"],
    ),
    Case(
        "globex-returns-001",
        GLOBEX,
        "Can I return a card reader I already opened?",
        {"returns-tap": 3, "warranty-tap-v2": 0, "refund-policy-v2": 0},
        [
            (
                "returns-tap",
                "Opened readers in working condition are refunded minus a restocking fee of EUR 10.",
            )
        ],
        "Yes, within 30 days of delivery, minus a EUR 10 restocking fee if it is in working condition.",
        ["returns", "hardware"],
    ),
    Case(
        "globex-security-001",
        GLOBEX,
        "Is two-factor authentication mandatory in Ledger?",
        {"security-2fa": 3, "release-notes-2024": 1},
        [
            (
                "security-2fa",
                "From 1 March 2024, two-factor authentication (2FA) is mandatory for every Globex Ledger "
                "user.",
            )
        ],
        "Yes, for every user since 1 March 2024.",
        ["security", "2fa"],
    ),
    Case(
        "globex-security-002",
        GLOBEX,
        "I lost my phone and my backup codes, how do I get back into my account?",
        {"security-2fa": 3, "security-password-reset-v2": 0},
        [
            (
                "security-2fa",
                "If you have no backup codes, contact support: we verify your identity with a copy of your "
                "ID and restore access within 3 business days.",
            )
        ],
        "Contact support; after verifying your ID they restore access within 3 business days.",
        ["security", "2fa", "colloquial"],
    ),
    Case(
        "globex-security-003",
        GLOBEX,
        "How long is the password reset link valid?",
        {"security-password-reset-v2": 3, "security-password-reset-v1": 0},
        [
            (
                "security-password-reset-v2",
                "The reset link we email you is valid for 60 minutes and works once.",
            )
        ],
        "60 minutes, single use.",
        ["security", "password"],
    ),
    Case(
        "globex-security-004",
        GLOBEX,
        "minimum pasword lenght",
        {"security-password-reset-v2": 3, "security-password-reset-v1": 0},
        [
            (
                "security-password-reset-v2",
                "Your new password must have at least 10 characters and include at least one number.",
            )
        ],
        "At least 10 characters, including at least one number.",
        ["security", "password", "misspelled", "colloquial"],
    ),
    Case(
        "globex-security-005",
        GLOBEX,
        "Does Ledger support SCIM provisioning with SSO?",
        {"security-sso": 3, "pricing-scale-v2": 1},
        [
            (
                "security-sso",
                "Automatic deprovisioning through SCIM is not available; remove leavers in Settings > Users.",
            )
        ],
        "No. Users are created just-in-time at first sign-in; SCIM deprovisioning is not available.",
        ["security", "sso"],
    ),
    Case(
        "globex-security-006",
        GLOBEX,
        "Which Ledger plan includes single sign-on?",
        {"security-sso": 3, "pricing-scale-v2": 2, "pricing-scale-v1": 0},
        [
            ("security-sso", "Single sign-on (SSO) with SAML 2.0 is available on the Ledger Scale plan."),
            (
                "pricing-scale-v2",
                "Scale includes unlimited users, unlimited invoices and bank feeds, approval workflows, "
                "consolidated reporting for up to 10 entities and SAML single sign-on.",
            ),
        ],
        "Scale (SAML 2.0 single sign-on).",
        ["security", "sso", "pricing"],
    ),
    Case(
        "globex-security-007",
        GLOBEX,
        "Where is our bookkeeping data hosted?",
        {"security-data-protection": 3},
        [
            (
                "security-data-protection",
                "Production data is hosted in Frankfurt, Germany. Encrypted backups are kept in Dublin, "
                "Ireland, for 30 days.",
            )
        ],
        "In Frankfurt, Germany, with encrypted backups in Dublin, Ireland for 30 days.",
        ["security", "data-residency"],
    ),
    Case(
        "globex-contract-001",
        GLOBEX,
        "What discount did Soylent Foods get on Scale?",
        {"contract-soylent-order": 3, "pricing-scale-v2": 1},
        [
            (
                "contract-soylent-order",
                "Soylent receives a discount of 40 percent off Scale list price for the first 3 years, "
                "approved as exception request GX-DISC-0412.",
            )
        ],
        "40 percent off Scale list price for the first 3 years, then list minus 20 percent.",
        ["contract", "confidential", "pricing"],
    ),
    Case(
        "globex-contract-002",
        GLOBEX,
        "What uptime commitment and credits apply to the Soylent order?",
        {"contract-soylent-order": 3, "sla-policy": 2},
        [
            ("contract-soylent-order", "The Scale SLA of 99.9% monthly uptime applies."),
            (
                "sla-policy",
                "If monthly uptime on Scale falls below 99.9%, you receive a credit of 5% of the monthly fee "
                "for every full hour of additional downtime, up to 50% of the monthly fee.",
            ),
        ],
        "99.9% monthly uptime; 5% of the monthly fee per full hour of extra downtime, up to 50%.",
        ["contract", "confidential", "sla"],
    ),
    Case(
        "globex-contract-003",
        GLOBEX,
        "What are the confidential severance clauses?",
        {"contract-coo-employment": 3},
        [
            (
                "contract-coo-employment",
                "If Globex ends the employment for reasons other than serious misconduct, the COO receives a "
                "severance payment of 9 months of gross base salary, in addition to the statutory "
                "transition payment.",
            )
        ],
        "The COO gets 9 months of gross base salary plus the statutory transition payment, paid as a lump "
        "sum within 30 days.",
        ["contract", "confidential", "severance"],
    ),
    Case(
        "globex-contract-004",
        GLOBEX,
        "How long does the Umbrella bank exclusivity last?",
        {"contract-umbrella-partnership": 3},
        [
            (
                "contract-umbrella-partnership",
                "Globex will not sign a similar partnership with another bank in the Benelux until 31 "
                "January 2027.",
            )
        ],
        "Until 31 January 2027, for banks in the Benelux.",
        ["contract", "confidential"],
    ),
    Case(
        "globex-data-001",
        GLOBEX,
        "how long do i have to export my data after cancelling",
        {"cancellation-guide": 3, "faq-general": 2, "release-notes-2024": 1},
        [
            (
                "cancellation-guide",
                "After cancellation your administration stays available read-only for 90 days so you can "
                "export invoices and reports.",
            ),
            (
                "faq-general",
                "Your data stays available read-only for 90 days after cancellation so you can export it, "
                "and is then deleted.",
            ),
        ],
        "90 days read-only, then the administration is permanently deleted.",
        ["data-retention", "colloquial"],
    ),
    Case(
        "globex-unanswerable-001",
        GLOBEX,
        "Does Ledger integrate with QuickBooks Desktop?",
        {"faq-general": 0, "onboarding-guide": 0},
        [],
        None,
        ["integrations"],
    ),
    Case(
        "globex-unanswerable-002",
        GLOBEX,
        "How long is the warranty on Fieldsense gateways?",
        {"warranty-tap-v2": 0},
        [],
        None,
        ["warranty", "cross-tenant-trap"],
    ),
    Case(
        "globex-unanswerable-003",
        GLOBEX,
        "Is there a student discount on Ledger Basic?",
        {"pricing-basic-v1": 0, "marketing-spring-promo": 0},
        [],
        None,
        ["pricing"],
    ),
]

INITECH_PRO_API = "Professional accounts can make 6,000 API calls per hour."
INITECH_ANNUAL_REFUND = (
    "Annual plans can be cancelled for a full refund within 45 days of the start or renewal date."
)
INITECH_ENTERPRISE_FEATURES = (
    "Everything in Professional, plus single sign-on with SCIM provisioning, IP allowlisting, two sandbox "
    "environments, unlimited assets and audit logs kept for 7 years."
)
INITECH_CASES = [
    Case(
        "initech-pricing-001",
        INITECH,
        "How many API calls per hour does Deskflow Professional allow?",
        {
            "pricing-professional-v3": 3,
            "faq-api": 1,
            "pricing-professional-v2": 0,
            "pricing-professional-v1": 0,
        },
        [("pricing-professional-v3", INITECH_PRO_API)],
        "6,000 API calls per hour; bulk endpoints count as one call per 100 records.",
        ["pricing", "api"],
    ),
    Case(
        "initech-pricing-002",
        INITECH,
        "pro plan api limit how much?",
        {"pricing-professional-v3": 3, "pricing-professional-v2": 0, "pricing-professional-v1": 0},
        [("pricing-professional-v3", INITECH_PRO_API)],
        "6,000 API calls per hour.",
        ["pricing", "api", "colloquial"],
    ),
    Case(
        "initech-pricing-003",
        INITECH,
        "What does Professional cost per agent on monthly billing?",
        {"pricing-professional-v3": 3, "marketing-homepage": 0, "pricing-professional-v2": 0},
        [
            (
                "pricing-professional-v3",
                "Professional costs $39 per agent per month billed annually, or $45 per agent per month "
                "billed monthly.",
            )
        ],
        "$45 per agent per month billed monthly ($39 billed annually).",
        ["pricing"],
    ),
    Case(
        "initech-pricing-004",
        INITECH,
        "enterprize plan price per agent",
        {"pricing-enterprise-v2": 3, "pricing-enterprise-v1": 0},
        [("pricing-enterprise-v2", "Enterprise costs $69 per agent per month, billed annually.")],
        "$69 per agent per month, billed annually (500+ agents quoted individually).",
        ["pricing", "misspelled", "colloquial"],
    ),
    Case(
        "initech-pricing-005",
        INITECH,
        "What is the maximum number of agents on the Team plan?",
        {"pricing-team-v1": 3, "marketing-homepage": 0},
        [("pricing-team-v1", "Team is limited to 10 agents.")],
        "10 agents.",
        ["pricing"],
    ),
    Case(
        "initech-pricing-006",
        INITECH,
        "Can we get SSO on the Professional plan?",
        {"security-sso": 3, "pricing-professional-v3": 2, "pricing-professional-v2": 0},
        [
            (
                "security-sso",
                "SSO is included on Enterprise and can be added to Professional for $4 per agent per month.",
            ),
            (
                "pricing-professional-v3",
                "Single sign-on is available on Professional as an add-on for $4 per agent per month.",
            ),
        ],
        "Yes, as an add-on for $4 per agent per month (included on Enterprise, not available on Team).",
        ["pricing", "security", "sso"],
    ),
    Case(
        "initech-api-001",
        INITECH,
        "Do bulk endpoints count as multiple API calls?",
        {"faq-api": 3, "pricing-professional-v3": 2},
        [
            ("faq-api", "Bulk endpoints count as one call per 100 records."),
            ("pricing-professional-v3", "Bulk endpoints count as one call per 100 records."),
        ],
        "One call per 100 records.",
        ["api"],
    ),
    Case(
        "initech-refund-001",
        INITECH,
        "refund window for annual plan?",
        {"refund-policy-v2": 3, "faq-billing": 2, "cancellation-guide": 2, "refund-policy-v1": 0},
        [
            ("refund-policy-v2", INITECH_ANNUAL_REFUND),
            ("faq-billing", "Yes, within 45 days of the start or renewal date you get a full refund."),
            (
                "cancellation-guide",
                "Annual plans stop at the end of the term; if you cancel within 45 days of the start or "
                "renewal date, you can also request a full refund.",
            ),
        ],
        "45 days from the start or renewal date for a full refund.",
        ["refund", "colloquial"],
    ),
    Case(
        "initech-refund-002",
        INITECH,
        "If we remove agents in the middle of an annual term, do we get money back?",
        {"refund-policy-v2": 3, "faq-billing": 1, "refund-policy-v1": 0},
        [
            (
                "refund-policy-v2",
                "If you remove agents during an annual term, the unused amount is kept as account credit for "
                "future invoices; it is not paid out.",
            )
        ],
        "No cash refund; the unused amount becomes account credit for future invoices.",
        ["refund", "billing"],
    ),
    Case(
        "initech-refund-003",
        INITECH,
        "refund on montly plan",
        {"refund-policy-v2": 3, "cancellation-guide": 1, "refund-policy-v1": 0},
        [
            (
                "refund-policy-v2",
                "Monthly plans can be cancelled at any time and are not refunded for the current month.",
            )
        ],
        "No refund for the current month; monthly plans can be cancelled at any time.",
        ["refund", "misspelled", "colloquial"],
    ),
    Case(
        "initech-warranty-001",
        INITECH,
        "How long is the warranty on the Deskflow Kiosk?",
        {"warranty-kiosk-v2": 3, "release-notes-2024": 1, "warranty-kiosk-v1": 0},
        [("warranty-kiosk-v2", "The Kiosk K2 is covered for 36 months from the date of shipment.")],
        "36 months from shipment for the Kiosk K2 (accessories 12 months).",
        ["warranty", "hardware"],
    ),
    Case(
        "initech-warranty-002",
        INITECH,
        "warranty on the barcode scanners?",
        {"warranty-kiosk-v2": 3, "warranty-kiosk-v1": 0},
        [
            (
                "warranty-kiosk-v2",
                "Accessories such as barcode scanners and badge readers are covered for 12 months.",
            )
        ],
        "12 months.",
        ["warranty", "hardware", "colloquial"],
    ),
    Case(
        "initech-warranty-003",
        INITECH,
        "What happens if we do not send back the faulty kiosk after a replacement?",
        {"warranty-kiosk-v2": 3, "returns-policy": 1},
        [("warranty-kiosk-v2", "Kiosks that are not returned within 30 days are invoiced at $1,450.")],
        "It is invoiced at $1,450 if not returned within 30 days.",
        ["warranty", "hardware"],
    ),
    Case(
        "initech-returns-001",
        INITECH,
        "restocking fee for returning a kiosk",
        {"returns-policy": 3, "warranty-kiosk-v2": 0},
        [
            (
                "returns-policy",
                "Returned kiosks are refunded minus a restocking fee of $150 per kiosk.",
            )
        ],
        "$150 per kiosk, for returns within 21 days of delivery.",
        ["returns", "hardware", "colloquial"],
    ),
    Case(
        "initech-security-001",
        INITECH,
        "Which two-factor authentication methods does Deskflow support?",
        {"security-2fa": 3, "release-notes-2024": 1},
        [
            (
                "security-2fa",
                "Deskflow supports authenticator apps (TOTP), WebAuthn security keys and push approval "
                "through the Deskflow mobile app. SMS is not offered.",
            )
        ],
        "Authenticator apps (TOTP), WebAuthn security keys and push approval in the mobile app; no SMS.",
        ["security", "2fa"],
    ),
    Case(
        "initech-security-002",
        INITECH,
        "How long is the password reset link valid?",
        {"security-password-reset": 3},
        [("security-password-reset", "The reset link is valid for 15 minutes.")],
        "15 minutes.",
        ["security", "password"],
    ),
    Case(
        "initech-security-003",
        INITECH,
        "acount locked after failed logins, how long?",
        {"security-password-reset": 3, "security-ip-allowlist": 0},
        [
            (
                "security-password-reset",
                "After 10 failed sign-in attempts, the account is locked for 30 minutes.",
            )
        ],
        "30 minutes after 10 failed attempts; administrators can unlock it sooner.",
        ["security", "password", "misspelled", "colloquial"],
    ),
    Case(
        "initech-security-004",
        INITECH,
        "How many IP ranges can we add to the allowlist?",
        {"security-ip-allowlist": 3, "pricing-enterprise-v2": 1},
        [
            (
                "security-ip-allowlist",
                "Under Admin > Security > IP allowlist, add up to 50 IPv4 or IPv6 ranges in CIDR notation.",
            )
        ],
        "Up to 50 IPv4 or IPv6 CIDR ranges (Enterprise plan).",
        ["security"],
    ),
    Case(
        "initech-security-005",
        INITECH,
        "Is SCIM provisioning available on Professional?",
        {"security-sso": 3, "pricing-enterprise-v2": 2, "pricing-professional-v3": 1},
        [
            (
                "security-sso",
                "On Enterprise, SCIM 2.0 provisioning creates, updates and deactivates agents automatically. "
                "On Professional, agents are created at first sign-in.",
            ),
            ("pricing-enterprise-v2", INITECH_ENTERPRISE_FEATURES),
        ],
        "No. SCIM is Enterprise-only; on Professional agents are created at first sign-in.",
        ["security", "sso"],
    ),
    Case(
        "initech-contract-001",
        INITECH,
        "What price per agent does Vandelay Industries pay?",
        {"contract-vandelay-msa": 3, "pricing-enterprise-v2": 1},
        [
            (
                "contract-vandelay-msa",
                "Vandelay pays $38.35 per agent per month, a 35 percent discount off the Enterprise list "
                "price in effect at signing, under pricing schedule VDL-35-ALPHA.",
            )
        ],
        "$38.35 per agent per month, 35 percent off the Enterprise list price at signing.",
        ["contract", "confidential", "pricing"],
    ),
    Case(
        "initech-contract-002",
        INITECH,
        "What service credits does Vandelay get for a priority 1 outage?",
        {"contract-vandelay-msa": 3, "sla-policy": 2},
        [
            (
                "contract-vandelay-msa",
                "The Enterprise SLA of 99.95% applies, with credits doubled for priority 1 outages.",
            ),
            (
                "sla-policy",
                "If we miss the commitment, you receive a service credit of 10% of the monthly fee when "
                "uptime is below the commitment but at least 99.0%, and 25% when uptime falls below 99.0%.",
            ),
        ],
        "Double the standard credits: 20% of the monthly fee below 99.95% (down to 99.0%), 50% below 99.0%.",
        ["contract", "confidential", "sla"],
    ),
    Case(
        "initech-contract-003",
        INITECH,
        "What are the confidential severance clauses?",
        {"contract-cto-employment": 3},
        [
            (
                "contract-cto-employment",
                "If Initech terminates the CTO without cause, or the CTO resigns for good reason, the CTO "
                "receives 6 months of base salary and a pro-rated annual bonus.",
            )
        ],
        "The CTO gets 6 months of base salary and a pro-rated bonus; full option vesting on a double "
        "trigger within 18 months of a change of control.",
        ["contract", "confidential", "severance"],
    ),
    Case(
        "initech-contract-004",
        INITECH,
        "What happens to Bluepeak's discount if they drop below 500 agents?",
        {"contract-bluepeak-msp": 3},
        [
            (
                "contract-bluepeak-msp",
                "Bluepeak must keep at least 500 paid agents across its clients; below that, the wholesale "
                "discount falls to 30 percent.",
            )
        ],
        "The wholesale discount falls from 45 to 30 percent.",
        ["contract", "confidential"],
    ),
    Case(
        "initech-contract-005",
        INITECH,
        "vandelay renewal notice period",
        {"contract-vandelay-msa": 3, "faq-billing": 1},
        [("contract-vandelay-msa", "Vandelay must give 120 days' written notice to stop a renewal.")],
        "120 days' written notice (the standard 30 days does not apply).",
        ["contract", "confidential", "renewal", "colloquial"],
    ),
    Case(
        "initech-data-001",
        INITECH,
        "How long are audit logs kept on Enterprise?",
        {"data-retention": 3, "pricing-enterprise-v2": 2, "pricing-enterprise-v1": 0},
        [
            (
                "data-retention",
                "Audit logs are kept for 1 year on Team and Professional, and for 7 years on Enterprise.",
            ),
            ("pricing-enterprise-v2", INITECH_ENTERPRISE_FEATURES),
        ],
        "7 years.",
        ["data-retention", "security"],
    ),
    Case(
        "initech-unanswerable-001",
        INITECH,
        "Is there an on-premise version of Deskflow?",
        {"marketing-comparison": 0},
        [],
        None,
        ["deployment"],
    ),
    Case(
        "initech-unanswerable-002",
        INITECH,
        "How much does the Ledger Scale plan cost?",
        {"pricing-enterprise-v2": 0},
        [],
        None,
        ["pricing", "cross-tenant-trap"],
    ),
    Case(
        "initech-unanswerable-003",
        INITECH,
        "Can requesters open tickets through WhatsApp?",
        {"faq-tickets": 0},
        [],
        None,
        ["tickets"],
    ),
]

CASES = ACME_CASES + GLOBEX_CASES + INITECH_CASES

# --------------------------------------------------------------------------------------------------------
# Pooled judgments (2026-12-04). The grades in the cases above were written with the cases and label
# mostly the answer documents. To make the set's judgments complete, the top 20 of the demo pipelines
# (bm25, dense, hybrid: `ragaudit pool --depth 20`) were pooled per case and every unlabelled candidate was
# judged by reading the query and the document, on the same scale (rule for grade 1: the document states
# part of the answer or says, without the facts, that it exists; a document on the same topic that holds
# none of the answer is 0; superseded versions stay 0). The pool covered most of each tenant's 30
# documents, so the few documents no pipeline ranked in its top 20 were judged too: every case is judged
# against every document of its tenant. The grades above are unchanged; the documents below are the
# judged candidates that are not 0. Every other document of the case's tenant is judged 0 (see
# `golden_record(..., complete=True)`). No unlabelled candidate turned out to answer a question (grade 2
# or 3), so these add no evidence span and leave every `relevant_chunk_ids` as it was.
# --------------------------------------------------------------------------------------------------------
POOLED_GRADES: dict[str, dict[str, int]] = {
    # acme
    "acme-pricing-001": {"release-notes-2024": 1},  # "new Professional plan ... higher API ... limits"
    "acme-pricing-002": {"faq-api": 1, "release-notes-2024": 1},  # as acme-pricing-001
    "acme-pricing-007": {"marketing-pro-launch": 1, "release-notes-2024": 1},  # overage billing, no price
    "acme-refund-002": {"cancellation-guide": 1},  # as acme-refund-001 (refund window exists, no figure)
    "acme-warranty-002": {"release-notes-2024": 1},  # "new devices ship with a longer warranty"
    "acme-sla-001": {"contract-northwind-msa": 1},  # "service credits calculated as in the Fieldsense SLA"
    "acme-contract-003": {"pricing-enterprise-v1": 1},  # Enterprise 99.95% uptime; Northwind is Enterprise
    # globex
    "globex-pricing-001": {"release-notes-2024": 1},  # new plans with higher API limits
    "globex-pricing-002": {"faq-api": 1, "release-notes-2024": 1},  # as globex-pricing-001
    "globex-pricing-005": {"faq-general": 1},  # a free accountant seat outside the user limit
    "globex-pricing-006": {"faq-api": 1, "release-notes-2024": 1},  # extra capacity blocks exist, no price
    "globex-refund-002": {"cancellation-guide": 1},  # monthly plans end at the end of the month
    "globex-security-001": {"security-sso": 1},  # with SSO enforced, Ledger's own 2FA prompt is skipped
    "globex-security-004": {"release-notes-2024": 1},  # "password rules were strengthened"
    "globex-contract-002": {"pricing-scale-v2": 1},  # Scale's 99.9% uptime commitment; Soylent is on Scale
    # initech
    "initech-pricing-001": {"release-notes-2024": 1},  # new plans with higher API limits
    "initech-pricing-002": {"faq-api": 1, "release-notes-2024": 1},  # as initech-pricing-001
    "initech-pricing-004": {"contract-vandelay-msa": 1},  # one customer's discounted Enterprise price
    "initech-pricing-006": {"pricing-enterprise-v2": 1},  # SSO included on Enterprise (part of the answer)
    "initech-contract-002": {"pricing-enterprise-v2": 1},  # Enterprise 99.95%; Vandelay is on Enterprise
}

CANARIES = [
    Canary(ACME, "contract-northwind-msa", "price-protection rider AC-7731"),
    Canary(ACME, "contract-cfo-employment", "Larkspur acceleration schedule"),
    Canary(ACME, "contract-brightwave-reseller", "internal code name Operation Tidewater"),
    Canary(GLOBEX, "contract-coo-employment", "the Heron continuation payment"),
    Canary(GLOBEX, "contract-umbrella-partnership", "tracked internally under the code BLUE LANTERN"),
    Canary(GLOBEX, "contract-soylent-order", "exception request GX-DISC-0412"),
    Canary(INITECH, "contract-cto-employment", "this provision as the Swordfish clause"),
    Canary(INITECH, "contract-vandelay-msa", "pricing schedule VDL-35-ALPHA"),
    Canary(INITECH, "contract-bluepeak-msp", "Internal deal reference: MSP-PINECONE-4490"),
]

# --------------------------------------------------------------------------------------------------------
# Build, check, write.
# --------------------------------------------------------------------------------------------------------
Record = dict[str, object]


def _word_count(text: str) -> int:
    return sum(1 for word in text.split() if word != "##")


def _latest_versions(docs: list[Doc]) -> dict[str, Doc]:
    """The highest version of every source: the one version that is ``active``."""
    latest: dict[str, Doc] = {}
    for doc in docs:
        if doc.source_id not in latest or doc.version > latest[doc.source_id].version:
            latest[doc.source_id] = doc
    return latest


def corpus_records(docs: list[Doc], problems: list[str]) -> list[Record]:
    """One record per document, with ``status`` and ``superseded_by`` derived from the versions."""
    latest = _latest_versions(docs)
    versions: dict[tuple[str, int], str] = {}
    seen: set[str] = set()
    records: list[Record] = []
    for doc in docs:
        where = f"document {doc.doc_id}"
        if doc.doc_id in seen:
            problems.append(f"{where}: duplicate document id")
        seen.add(doc.doc_id)
        if (doc.source_id, doc.version) in versions:
            problems.append(f"{where}: same source and version as {versions[doc.source_id, doc.version]}")
        versions[doc.source_id, doc.version] = doc.doc_id
        if doc.doc_type not in DOC_TYPES:
            problems.append(f"{where}: doc_type {doc.doc_type!r} is not one of {', '.join(DOC_TYPES)}")
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", doc.effective_date):
            problems.append(f"{where}: effective_date {doc.effective_date!r} is not YYYY-MM-DD")
        text = doc.text
        if not text.isascii():
            problems.append(f"{where}: text is not ASCII (offsets must not depend on an encoding)")
        words = _word_count(text)
        if not MIN_WORDS <= words <= MAX_WORDS:
            problems.append(f"{where}: {words} words, outside {MIN_WORDS}-{MAX_WORDS}")
        active = latest[doc.source_id]
        metadata: Record = {
            "version": doc.version,
            "status": "active" if active is doc else "superseded",
            "source_id": doc.source_id,
            "effective_date": doc.effective_date,
            "doc_type": doc.doc_type,
            "confidential": doc.doc_type == "contract",
        }
        if active is not doc:
            metadata["superseded_by"] = active.doc_id
            if doc.effective_date >= active.effective_date:
                problems.append(f"{where}: superseded but not older than {active.doc_id}")
        records.append(
            {
                "doc_id": doc.doc_id,
                "tenant_id": doc.tenant,
                "title": doc.title,
                "text": text,
                "metadata": metadata,
            }
        )
    return records


def _locate(text: str, span: str) -> tuple[int, int] | None:
    """Offsets of ``span`` in ``text`` when it occurs exactly once, else ``None``."""
    start = text.find(span)
    if not span or start < 0 or text.find(span, start + 1) >= 0:
        return None
    return start, start + len(span)


def golden_record(
    case: Case,
    docs: dict[str, Doc],
    superseded: set[str],
    problems: list[str],
    *,
    pooled: dict[str, int] | None = None,
    complete: bool = False,
) -> Record:
    """The case in the golden JSONL format; labels checked against the corpus and the case's tenant.

    ``pooled`` holds the case's grades from the pooled judging (``POOLED_GRADES``): grades 0 or 1 of
    documents the case does not grade itself (a grade 2 or 3 needs an evidence span, so it belongs in the
    case). With ``complete``, every other document of the case's tenant is judged 0, after the case's and
    the pooled grades, in corpus order.
    """
    where = f"case {case.id}"
    if not case.id.startswith(f"{case.tenant}-"):
        problems.append(f"{where}: id does not start with its tenant {case.tenant!r}")
    grades: dict[str, int] = {}
    for slug, grade in case.grades.items():
        doc_id = f"{case.tenant}-{slug}"
        doc = docs.get(doc_id)
        if doc is None or doc.tenant != case.tenant:
            problems.append(f"{where}: label {doc_id!r} is not a document of tenant {case.tenant!r}")
        if grade not in (0, 1, 2, 3):
            problems.append(f"{where}: grade {grade!r} of {doc_id!r} is not 0..3")
        if doc_id in superseded and grade != 0:
            problems.append(f"{where}: superseded {doc_id!r} must be graded 0")
        grades[doc_id] = grade
    for slug, grade in (pooled or {}).items():
        doc_id = f"{case.tenant}-{slug}"
        doc = docs.get(doc_id)
        if doc is None or doc.tenant != case.tenant:
            problems.append(f"{where}: pooled label {doc_id!r} is not a document of tenant {case.tenant!r}")
        if doc_id in grades:
            problems.append(f"{where}: pooled label {doc_id!r} is already graded by the case")
        if grade not in (0, 1):
            problems.append(
                f"{where}: pooled grade {grade!r} of {doc_id!r}: only 0 or 1 here; a relevant document "
                "goes into the case with its evidence span"
            )
        if doc_id in superseded and grade != 0:
            problems.append(f"{where}: superseded {doc_id!r} must be graded 0")
        grades.setdefault(doc_id, grade)
    if complete:
        for doc_id, doc in docs.items():
            if doc.tenant == case.tenant:
                grades.setdefault(doc_id, 0)
    relevant = [doc_id for doc_id, grade in grades.items() if grade >= RELEVANT_GRADE]
    evidence: list[Record] = []
    for slug, span in case.evidence:
        doc_id = f"{case.tenant}-{slug}"
        if doc_id not in relevant or doc_id not in docs:
            problems.append(f"{where}: evidence from {doc_id!r}, which is not graded relevant")
            continue
        found = _locate(docs[doc_id].text, span)
        if found is None:
            problems.append(f"{where}: span not found exactly once in {doc_id!r}: {span[:60]!r}")
            continue
        evidence.append({"doc_id": doc_id, "start": found[0], "end": found[1], "grade": grades[doc_id]})
    for doc_id in relevant:
        if not any(e["doc_id"] == doc_id for e in evidence):
            problems.append(f"{where}: relevant {doc_id!r} has no evidence span")
    if relevant and case.answer is None:
        problems.append(f"{where}: answerable case without an answer")
    if not relevant and (case.answer is not None or case.evidence or any(grades.values())):
        problems.append(f"{where}: unanswerable probe must have only grade-0 labels, no evidence, no answer")
    given = [tag for tag in case.tags if tag in DERIVED_TAGS]
    if given:
        problems.append(f"{where}: tags {given} are derived from the labels; do not write them")
    latest = _latest_versions(list(docs.values()))
    # a trap: a superseded version is judged while its active version is relevant for the case
    trap = any(
        doc_id in superseded and latest[docs[doc_id].source_id].doc_id in relevant
        for doc_id in grades
        if doc_id in docs
    )
    derived = [
        tag
        for tag, applies in (
            ("unanswerable", not relevant),
            ("multi-source", len(relevant) >= 2),
            ("superseded-trap", trap),
        )
        if applies
    ]
    record: Record = {
        "id": case.id,
        "query": case.query,
        "tenant_id": case.tenant,
        "relevant_chunk_ids": relevant,
        "relevance": grades,
    }
    if evidence:
        record["evidence"] = evidence
    if case.answer is not None:
        record["answer"] = case.answer
    record["tags"] = list(dict.fromkeys([*case.tags, *derived]))
    return record


def canary_records(canaries: list[Canary], docs: list[Doc], problems: list[str]) -> list[Record]:
    """Planted secrets: each occurs exactly once in its confidential document and nowhere else."""
    records: list[Record] = []
    per_tenant: dict[str, int] = defaultdict(int)
    for canary in canaries:
        doc_id = f"{canary.tenant}-{canary.slug}"
        holders = [doc.doc_id for doc in docs if canary.secret in doc.text]
        owner = next((doc for doc in docs if doc.doc_id == doc_id), None)
        if owner is None or owner.doc_type != "contract":
            problems.append(f"canary {canary.secret!r}: {doc_id!r} is not a confidential contract")
        elif holders != [doc_id] or _locate(owner.text, canary.secret) is None:
            problems.append(
                f"canary {canary.secret!r}: must occur once in {doc_id!r} only, found in {holders}"
            )
        per_tenant[canary.tenant] += 1
        records.append({"tenant_id": canary.tenant, "doc_id": doc_id, "secret": canary.secret})
    for tenant in sorted({doc.tenant for doc in docs}):
        if per_tenant[tenant] < 2:
            problems.append(f"tenant {tenant!r}: {per_tenant[tenant]} canaries, need at least 2")
    return records


def build() -> tuple[dict[str, list[Record]], list[str]]:
    """All three files' records, and every problem found (an empty list means the data is consistent)."""
    problems: list[str] = []
    corpus = corpus_records(DOCS, problems)
    docs = {doc.doc_id: doc for doc in DOCS}
    latest = _latest_versions(DOCS)
    superseded = {doc.doc_id for doc in DOCS if latest[doc.source_id] is not doc}
    golden: list[Record] = []
    seen: set[str] = set()
    for case in CASES:
        if case.id in seen:
            problems.append(f"case {case.id}: duplicate id")
        seen.add(case.id)
        pooled = POOLED_GRADES.get(case.id, {})
        golden.append(golden_record(case, docs, superseded, problems, pooled=pooled, complete=True))
    for case_id in sorted(set(POOLED_GRADES) - seen):
        problems.append(f"pooled grades for {case_id!r}, which is not a case")
    canaries = canary_records(CANARIES, DOCS, problems)
    tenants = {doc.tenant for doc in DOCS}
    unanswerable = sum(1 for r in golden if not r["relevant_chunk_ids"])
    for label, have, need in (
        ("tenants", len(tenants), 3),
        ("documents", len(corpus), 80),
        ("cases", len(golden), 60),
        ("unanswerable cases", unanswerable, 8),
    ):
        if have < need:
            problems.append(f"{have} {label}, need at least {need}")
    for tenant in sorted(tenants - {case.tenant for case in CASES}):
        problems.append(f"tenant {tenant!r} has no golden cases")
    return {"corpus.jsonl": corpus, "golden.jsonl": golden, "canaries.jsonl": canaries}, problems


def to_jsonl(records: list[Record]) -> bytes:
    """One compact JSON object per line, ``\\n`` line ends, UTF-8: byte-identical on every run."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    files, problems = build()
    if problems:
        for problem in problems:
            print(f"build_demo_kb: {problem}", file=sys.stderr)
        print(f"build_demo_kb: {len(problems)} problem(s); nothing written", file=sys.stderr)
        return 1
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for name, records in files.items():
        (out / name).write_bytes(to_jsonl(records))
    counts = ", ".join(f"{len(records)} lines in {name}" for name, records in files.items())
    print(f"wrote {counts} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
