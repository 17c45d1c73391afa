"""One user's earlier conversations, and follow-up questions that can only be answered from them.

The sessions are written by hand because their value lies in realistic distractors: the staging and the
production database both have ports, Theo and the user both have dentist appointments, Heron and Kestrel both
have deadlines. A retriever that only matches "port" or "deadline" picks the wrong message.

Each fact is located by a marker substring of the one message that states it; the assistant never repeats the
value, so exactly one message holds the answer. Scenarios list the current session's turns, the follow-up as
the user typed it, and the same question rewritten to stand alone.
"""

from __future__ import annotations

U = "user"
A = "assistant"

# Chronological: the order here is the order in which the sessions happened.
SESSIONS = (
    {
        "id": "staging-vpc",
        "cluster": "infra",
        "title": "Moving staging into the new VPC",
        "messages": (
            (U, "We're moving the staging environment into the new VPC next Tuesday and I want a checklist."),
            (A, "Happy to help. Which components are moving, and is anything staying where it is?"),
            (
                U,
                "The app servers, the workers and the staging database. Our staging database is on port 6543 on "
                "pg-staging-2.internal, not the default port, which always trips people up.",
            ),
            (A, "Good to know. I'll call out the non-default port in the checklist so nobody uses the default."),
            (U, "Production stays where it is for now; it's still on port 5433 on the old cluster."),
            (A, "Understood, production is out of scope. I'll draft the checklist around the staging pieces only."),
            (U, "Add a step to rotate the staging credentials after the move."),
            (A, "Added as the final step, after the smoke tests pass."),
        ),
        "facts": {
            "staging-port": ("port 6543", "6543"),
            "staging-host": ("pg-staging-2.internal", "pg-staging-2.internal"),
            "prod-port": ("port 5433", "5433"),
        },
    },
    {
        "id": "warehouse",
        "cluster": "infra",
        "title": "Onboarding notes for the analytics warehouse",
        "messages": (
            (U, "Can you help me write onboarding notes for analysts who need the warehouse?"),
            (A, "Sure. What do they connect to, and with which account?"),
            (U, "The warehouse is ClickHouse on port 8123, and analysts use the read-only role analyst_ro."),
            (A, "Got it. Should the notes mention when the data is refreshed?"),
            (U, "Yes, the nightly ETL finishes at 02:30 UTC, so dashboards look stale before that."),
            (A, "I'll add a note on data freshness so nobody is surprised by yesterday's numbers in the small hours."),
        ),
        "facts": {
            "warehouse-port": ("port 8123", "8123"),
            "warehouse-role": ("analyst_ro", "analyst_ro"),
            "etl-time": ("02:30 UTC", "02:30 UTC"),
        },
    },
    {
        "id": "freeze",
        "cluster": "infra",
        "title": "Holiday code freeze announcement",
        "messages": (
            (U, "I need to tell the team about the holiday code freeze."),
            (A, "Sure. What are the dates?"),
            (U, "The freeze runs from 18 December to 6 January this year."),
            (A, "And outside the freeze, are there normal deploy windows worth mentioning?"),
            (U, "Yes, we deploy on Tuesdays and Thursdays after 14:00, never on Fridays."),
            (A, "Makes sense. Who should people contact for exceptions?"),
            (U, "Dana Whitfield is release manager this quarter, so exceptions go to her."),
            (A, "I'll draft the announcement with the dates, the usual windows and who to ask."),
        ),
        "facts": {
            "freeze-dates": ("18 December to 6 January", "18 December to 6 January"),
            "deploy-days": ("Tuesdays and Thursdays", "Tuesdays and Thursdays"),
            "release-manager": ("Dana Whitfield", "Dana Whitfield"),
        },
    },
    {
        "id": "recital",
        "cluster": "family",
        "title": "Maya's piano recital",
        "messages": (
            (U, "Maya's piano recital is coming up and I keep forgetting the details."),
            (A, "Tell me and I'll keep track of them for you."),
            (U, "It's on Saturday 14 June at 15:00."),
            (A, "Noted. Do you know where it is?"),
            (U, "The venue is Linden Hall on Marsh Road, and parking there is terrible."),
            (A, "Might be worth going by taxi then. Is she nervous?"),
            (U, "A bit. She's playing Chopin's Nocturne in E-flat major, Op. 9 No. 2."),
            (A, "That's a lovely piece. Practising the opening slowly usually helps with nerves."),
            (U, "Her teacher, Mrs Albescu, says exactly the same thing."),
            (A, "Sounds like she's in good hands."),
        ),
        "facts": {
            "recital-date": ("Saturday 14 June", "14 June"),
            "recital-venue": ("Linden Hall", "Linden Hall"),
            "recital-piece": ("Nocturne in E-flat", "Nocturne in E-flat major"),
            "piano-teacher": ("Mrs Albescu", "Mrs Albescu"),
        },
    },
    {
        "id": "theo",
        "cluster": "family",
        "title": "Fitting in Theo's appointments",
        "messages": (
            (U, "Theo has a dentist appointment and football, and I need to fit both around work."),
            (A, "What are the times?"),
            (U, "The dentist is on 3 July at 9:40 with Dr Okafor at the Harbour Street practice."),
            (A, "And football?"),
            (U, "Football practice is every Wednesday at 17:00 at the Riverside pitches."),
            (A, "Those don't clash. Does he need anything for football?"),
            (U, "New boots, he's a size 4 now."),
            (A, "Worth buying them a week early so he can break them in."),
        ),
        "facts": {
            "theo-dentist": ("3 July at 9:40", "3 July at 9:40"),
            "theo-football": ("every Wednesday at 17:00", "Wednesday at 17:00"),
            "theo-boots": ("size 4", "size 4"),
        },
    },
    {
        "id": "lisbon",
        "cluster": "travel",
        "title": "Lisbon trip planning",
        "messages": (
            (U, "I'm flying to Lisbon in May and want to get organised."),
            (A, "Great. What have you booked so far?"),
            (U, "The outbound flight is TP1363 on 12 May, leaving at 07:25 from Terminal 2."),
            (A, "Early start. Where are you staying?"),
            (U, "At Casa do Rio in Alfama; check-in is from 15:00."),
            (A, "So you'll have a few hours to fill after landing. You could leave your bags there first."),
            (U, "The return flight is on 19 May at 18:10."),
            (A, "Got it. I'd book the airport transfer soon, prices go up closer to the date."),
        ),
        "facts": {
            "lisbon-out-time": ("leaving at 07:25", "07:25"),
            "lisbon-flight-no": ("TP1363", "TP1363"),
            "lisbon-checkin": ("check-in is from 15:00", "15:00"),
            "lisbon-return": ("19 May at 18:10", "18:10"),
        },
    },
    {
        "id": "porto",
        "cluster": "travel",
        "title": "Adding Porto to the Portugal trip",
        "messages": (
            (U, "I'm adding a couple of days in Porto to the Portugal trip."),
            (A, "Nice. How are you getting there?"),
            (U, "Alfa Pendular train on 15 May at 09:00 from Santa Apolónia, coach 4, seat 62."),
            (A, "Good choice, it's a comfortable ride. Where are you staying in Porto?"),
            (U, "An apartment in Ribeira; the host is called João and he wants my arrival time by text."),
            (A, "Send it the day before, hosts appreciate the notice."),
        ),
        "facts": {
            "porto-seat": ("coach 4, seat 62", "coach 4, seat 62"),
            "porto-train-time": ("15 May at 09:00", "09:00"),
            "porto-host": ("João", "João"),
        },
    },
    {
        "id": "heron",
        "cluster": "work",
        "title": "Project Heron planning",
        "messages": (
            (U, "Let's plan Project Heron, the customer portal rebuild."),
            (A, "Sure. What are the constraints?"),
            (U, "The hard deadline for Heron is 28 February, because the old portal's licence expires then."),
            (A, "Tight but doable. What's the budget?"),
            (U, "We have €120,000 for Heron, including contractors."),
            (A, "Who signs off on scope changes?"),
            (U, "Ines Duarte is the stakeholder; anything that moves the deadline goes through her."),
            (A, "I'll keep a decision log she can review every week."),
        ),
        "facts": {
            "heron-deadline": ("28 February", "28 February"),
            "heron-budget": ("€120,000", "€120,000"),
            "heron-stakeholder": ("Ines Duarte", "Ines Duarte"),
        },
    },
    {
        "id": "kestrel",
        "cluster": "work",
        "title": "Project Kestrel kick-off",
        "messages": (
            (U, "Kestrel kicked off today, it's the event pipeline project."),
            (A, "Exciting. What's the timeline?"),
            (U, "Kestrel's deadline is 15 April for the first production release."),
            (A, "And the main technical choices?"),
            (U, "Kestrel runs on Kafka with three partitions per topic to start with."),
            (A, "Sensible starting point. Who is sponsoring it?"),
            (U, "Raj Patel sponsors Kestrel and wants a demo every second Friday."),
            (A, "I'll remind you the Thursday before each one."),
        ),
        "facts": {
            "kestrel-deadline": ("15 April", "15 April"),
            "kestrel-partitions": ("three partitions", "three"),
            "kestrel-demos": ("every second Friday", "every second Friday"),
        },
    },
    {
        "id": "home",
        "cluster": "home",
        "title": "House and car admin",
        "messages": (
            (U, "Help me keep track of house and car admin."),
            (A, "Sure. What's coming up?"),
            (U, "The boiler was last serviced by Hendry Heating in October, so the next one is due next October."),
            (A, "Noted. And the car?"),
            (U, "The car's registration renewal is due on 30 November."),
            (A, "I'll remind you a few weeks before."),
            (U, "Also, the tyre pressure for the Octavia is 2.3 bar at the front and 2.1 at the back."),
            (A, "Checking them monthly is a good habit."),
        ),
        "facts": {
            "boiler-company": ("Hendry Heating", "Hendry Heating"),
            "car-registration": ("30 November", "30 November"),
            "tyre-pressure": ("2.3 bar", "2.3 bar"),
        },
    },
    {
        "id": "health",
        "cluster": "health",
        "title": "Health notes",
        "messages": (
            (U, "I want a place to keep a few health notes."),
            (A, "Of course. What would you like to record?"),
            (U, "I'm allergic to penicillin, it gives me hives."),
            (A, "That's important to mention to any new doctor or pharmacist."),
            (U, "I take 1000 IU of vitamin D every morning in winter."),
            (A, "Okay, noted."),
            (U, "And my gym membership renews on 1 August at €39 a month."),
            (A, "Do you want a reminder before it renews, in case you want to change plans?"),
        ),
        "facts": {
            "allergy": ("penicillin", "penicillin"),
            "vitamin-d": ("1000 IU", "1000 IU"),
            "gym-renewal": ("1 August", "1 August"),
        },
    },
    {
        "id": "budget",
        "cluster": "money",
        "title": "Monthly budget review",
        "messages": (
            (U, "Let's go over my monthly budget."),
            (A, "Sure. Let's start with fixed costs."),
            (U, "Rent is €1,450, due on the 1st of each month."),
            (A, "And what are you saving for?"),
            (U, "I'm saving €8,000 for the kitchen renovation by December."),
            (A, "That's a clear target. Anything else going out automatically?"),
            (U, "My pension contribution is 6% of salary, matched by work."),
            (A, "Good, that's a healthy rate."),
        ),
        "facts": {
            "rent": ("€1,450", "€1,450"),
            "kitchen-goal": ("€8,000", "€8,000"),
            "pension": ("6% of salary", "6%"),
        },
    },
    {
        "id": "sam",
        "cluster": "family",
        "title": "Sam's birthday",
        "messages": (
            (U, "Sam's birthday is on 22 September and I need gift ideas."),
            (A, "What is Sam into?"),
            (U, "Sam loves Japanese whisky, especially Hakushu."),
            (A, "A bottle plus a tasting experience could be a nice combination."),
            (U, "I've booked dinner at Osteria Lupo for 20:00 that evening."),
            (A, "Lovely. Want a reminder about the cake too?"),
        ),
        "facts": {
            "sam-birthday": ("22 September", "22 September"),
            "sam-whisky": ("Hakushu", "Hakushu"),
            "sam-dinner": ("Osteria Lupo for 20:00", "20:00"),
        },
    },
    {
        "id": "bookclub",
        "cluster": "social",
        "title": "Book club",
        "messages": (
            (U, "Book club notes: the next meeting is on 9 March at Clara's flat."),
            (A, "What are you reading this time?"),
            (U, "The Remains of the Day by Kazuo Ishiguro."),
            (A, "Great choice."),
            (U, "And I'm hosting in May, so I need to pick the following book by April."),
            (A, "I can suggest some options closer to the time."),
        ),
        "facts": {
            "bookclub-meeting": ("9 March", "9 March"),
            "bookclub-book": ("The Remains of the Day", "The Remains of the Day"),
            "bookclub-hosting": ("hosting in May", "May"),
        },
    },
    {
        "id": "laptop",
        "cluster": "work",
        "title": "Setting up the new work laptop",
        "messages": (
            (U, "IT gave me a new laptop and I need to get the VPN and everything else working."),
            (A, "Sure. What do you have so far?"),
            (U, "The asset tag is RC-40217; they asked me to keep it handy for support calls."),
            (A, "Okay. VPN next?"),
            (U, "The VPN gateway is vpn-eu.corp.example and I have to approve an Okta push for MFA."),
            (A, "Got it. Any problems so far?"),
            (U, "The docking station doesn't detect the second monitor; I opened IT ticket 88412 about it."),
            (A, "I'll remind you to chase it if nothing happens this week."),
        ),
        "facts": {
            "asset-tag": ("RC-40217", "RC-40217"),
            "vpn-gateway": ("vpn-eu.corp.example", "vpn-eu.corp.example"),
            "it-ticket": ("ticket 88412", "88412"),
        },
    },
    {
        "id": "garden",
        "cluster": "home",
        "title": "Vegetable garden plans",
        "messages": (
            (U, "I'm planning the vegetable garden this year."),
            (A, "Lovely. What are you growing?"),
            (U, "Tomatoes mainly; I planted them out on 20 April."),
            (A, "How big is the bed?"),
            (U, "The raised bed is 2.4 by 1.2 metres."),
            (A, "That's a good size for a mix of tomatoes and herbs."),
            (U, "I water every two days unless it rains."),
            (A, "Consistent watering helps prevent split fruit."),
        ),
        "facts": {
            "tomatoes-planted": ("20 April", "20 April"),
            "raised-bed": ("2.4 by 1.2 metres", "2.4 by 1.2 metres"),
            "watering": ("every two days", "every two days"),
        },
    },
    {
        "id": "own-appointments",
        "cluster": "health",
        "title": "My own appointments",
        "messages": (
            (U, "I need to sort out my own appointments for once, not just the kids'."),
            (A, "Good idea. What's booked?"),
            (U, "My dentist check-up is on 11 July at 14:15 with Dr Havel."),
            (A, "And anything else?"),
            (U, "The GP appointment for my knee is on 2 July at 10:30."),
            (A, "I hope the knee gets sorted. I'll keep both in mind."),
        ),
        "facts": {
            "own-dentist": ("11 July at 14:15", "11 July at 14:15"),
            "gp-knee": ("2 July at 10:30", "2 July at 10:30"),
        },
    },
    {
        "id": "outage",
        "cluster": "infra",
        "title": "Production database outage notes",
        "messages": (
            (U, "We had an outage on the production database last Thursday; I want notes for the review."),
            (A, "Sure. What did you find?"),
            (U, "The root cause was the disk filling up on pg-prod-1 because WAL archiving had stalled."),
            (A, "What actions came out of it?"),
            (U, "We agreed to add a disk usage alert at 80% and to test WAL archiving weekly."),
            (A, "Both sensible. I'll structure the notes around the timeline and those actions."),
        ),
        "facts": {
            "outage-cause": ("disk filling up", "the disk filling up"),
            "disk-alert": ("alert at 80%", "80%"),
        },
    },
)

# (fact, current-session turns, follow-up as typed, standalone rewrite); ambiguous follow-ups first.
AMBIGUOUS = (
    (
        "staging-port",
        (
            (U, "I'm pointing the new migration job at the staging database this afternoon."),
            (A, "Okay. Want me to draft the connection string?"),
        ),
        "Yes. Which port is it on again?",
        "Which port is our staging database on?",
    ),
    (
        "staging-host",
        (
            (U, "The CI pipeline needs to reach the staging database."),
            (A, "It will need the host and a set of credentials."),
        ),
        "What was its hostname?",
        "What is the hostname of our staging database?",
    ),
    (
        "prod-port",
        ((U, "I'm writing a read-only dashboard against production Postgres."), (A, "Good call keeping it read-only.")),
        "Remind me which port that one uses?",
        "Which port does our production database use?",
    ),
    (
        "warehouse-port",
        ((U, "A new analyst can't connect to the warehouse."), (A, "Let's check their connection settings first.")),
        "What port should they be using for it?",
        "What port is the analytics warehouse on?",
    ),
    (
        "warehouse-role",
        ((U, "Another analyst needs access to the warehouse."), (A, "What kind of access do they need?")),
        "Just reading. What was the role called?",
        "What is the name of the read-only role for the analytics warehouse?",
    ),
    (
        "etl-time",
        (
            (U, "Someone complained the sales dashboard showed yesterday's numbers at 1am."),
            (A, "That could be down to the nightly load into the warehouse."),
        ),
        "Right, when does that finish?",
        "When does the nightly ETL into the analytics warehouse finish?",
    ),
    (
        "freeze-dates",
        (
            (U, "Marketing want to launch the new pricing page in late December."),
            (A, "That might collide with the holiday code freeze."),
        ),
        "When does it start and end?",
        "What are the dates of the holiday code freeze?",
    ),
    (
        "deploy-days",
        (
            (U, "I want to ship the billing fix this week."),
            (A, "Outside the freeze, you'd go with the normal deploy days."),
        ),
        "Which days are those again?",
        "On which days of the week do we deploy?",
    ),
    (
        "release-manager",
        (
            (U, "We need an exception to deploy on a Friday."),
            (A, "Exceptions normally need the release manager's approval."),
        ),
        "Who is that this quarter?",
        "Who is the release manager this quarter?",
    ),
    (
        "recital-date",
        ((U, "Grandma wants to come to Maya's recital."), (A, "Lovely, she'll need the date and the time.")),
        "When is it again?",
        "When is Maya's piano recital?",
    ),
    (
        "recital-venue",
        ((U, "I'm booking a taxi for Maya's recital."), (A, "Good idea given the parking.")),
        "Can you remind me where it is?",
        "Where is Maya's piano recital being held?",
    ),
    (
        "recital-piece",
        ((U, "Maya is nervous about the recital."), (A, "That's normal. Is she practising every day?")),
        "Yes. What is she playing there again?",
        "What piece is Maya playing at her piano recital?",
    ),
    (
        "piano-teacher",
        ((U, "I want to thank Maya's piano teacher with a card."), (A, "That's a kind gesture.")),
        "What's her name again?",
        "What is the name of Maya's piano teacher?",
    ),
    (
        "theo-dentist",
        ((U, "Theo keeps complaining about a wobbly tooth."), (A, "Is he due to see the dentist soon?")),
        "Yes, when is that appointment?",
        "When is Theo's dentist appointment?",
    ),
    (
        "theo-football",
        (
            (U, "Theo wants to join a second football club."),
            (A, "Worth checking it doesn't clash with his current practice."),
        ),
        "When is that one?",
        "When is Theo's current football practice?",
    ),
    (
        "theo-boots",
        ((U, "I'm ordering Theo's new football boots online."), (A, "Make sure you get the right size.")),
        "I told you, didn't I? What size was it?",
        "What shoe size does Theo need for his football boots?",
    ),
    (
        "lisbon-out-time",
        (
            (U, "I need to book a taxi to the airport for the Lisbon trip."),
            (A, "You'll want to arrive two hours before departure."),
        ),
        "What time does it leave again?",
        "What time does my outbound flight to Lisbon leave?",
    ),
    (
        "lisbon-flight-no",
        ((U, "My mum wants to track my flight to Lisbon."), (A, "She can do that with the flight number.")),
        "What's the number of that one?",
        "What is the flight number of my outbound flight to Lisbon?",
    ),
    (
        "lisbon-checkin",
        (
            (U, "We land in Lisbon before lunch and want to drop our bags at the hotel."),
            (A, "Most hotels will hold luggage."),
        ),
        "What time can we actually check in there?",
        "What time is check-in at my hotel in Lisbon?",
    ),
    (
        "lisbon-return",
        (
            (U, "I want to book lunch in Lisbon on the last day."),
            (A, "Just make sure it fits around the return flight."),
        ),
        "When does that leave?",
        "When does my return flight from Lisbon leave?",
    ),
    (
        "porto-seat",
        ((U, "I'm printing the tickets for the Porto leg of the trip."), (A, "Do you have everything for the train?")),
        "I think so. Which seat did I book on it?",
        "Which coach and seat did I book on the train to Porto?",
    ),
    (
        "porto-host",
        ((U, "I'll text the Porto apartment host tonight."), (A, "Good idea to confirm your arrival time.")),
        "What was his name?",
        "What is the name of my Porto apartment host?",
    ),
    (
        "heron-deadline",
        (
            (U, "The Heron team asked for two more weeks."),
            (A, "That depends on how much slack there is before the deadline."),
        ),
        "When is it exactly?",
        "What is the deadline for Project Heron?",
    ),
    (
        "heron-budget",
        ((U, "We might need another contractor on Heron."), (A, "That would eat into the budget.")),
        "How much do we have in total for it?",
        "What is the total budget for Project Heron?",
    ),
    (
        "heron-stakeholder",
        ((U, "The Heron scope is changing again."), (A, "Scope changes need sign-off.")),
        "Who signs off on those?",
        "Who signs off on scope changes for Project Heron?",
    ),
    (
        "kestrel-deadline",
        ((U, "I'm updating the roadmap slide for Kestrel."), (A, "Do you want the milestones on it?")),
        "Yes, when is its first release due?",
        "When is Project Kestrel's first production release due?",
    ),
    (
        "kestrel-partitions",
        ((U, "We're seeing consumer lag on Kestrel."), (A, "That can happen if there aren't enough partitions.")),
        "How many did we start with?",
        "How many partitions per topic did Kestrel start with?",
    ),
    (
        "kestrel-demos",
        ((U, "The Kestrel demo went well today."), (A, "Glad to hear it! The sponsor must be pleased.")),
        "Hopefully. How often does he want those?",
        "How often does Kestrel's sponsor want a demo?",
    ),
    (
        "boiler-company",
        ((U, "The boiler is making a banging noise."), (A, "That might need a heating engineer.")),
        "Who serviced it last time?",
        "Which company serviced my boiler last time?",
    ),
    (
        "car-registration",
        ((U, "I got a letter about the car."), (A, "Is it about the registration renewal?")),
        "Probably. When is that due?",
        "When is my car registration renewal due?",
    ),
    (
        "tyre-pressure",
        ((U, "I'm at the petrol station checking the tyres on the Octavia."), (A, "Good habit before a long drive.")),
        "What should the front ones be at?",
        "What is the front tyre pressure for my Octavia?",
    ),
    (
        "allergy",
        (
            (U, "The doctor wants to prescribe an antibiotic for this chest infection."),
            (A, "Make sure they know about any allergies."),
        ),
        "Which one was I allergic to again?",
        "Which antibiotic am I allergic to?",
    ),
    (
        "gym-renewal",
        (
            (U, "I'm thinking of cancelling the gym."),
            (A, "Check when the membership renews so you aren't charged again."),
        ),
        "When does it renew?",
        "When does my gym membership renew?",
    ),
    (
        "kitchen-goal",
        ((U, "The kitchen fitter sent a quote."), (A, "Worth comparing it with what you've been saving towards.")),
        "What was the target again?",
        "How much am I saving for the kitchen renovation?",
    ),
    (
        "sam-dinner",
        ((U, "I need to confirm Sam's birthday dinner."), (A, "Do you want me to draft a message to the restaurant?")),
        "Yes. What time did I book it for?",
        "What time is the dinner booking for Sam's birthday?",
    ),
)

# Follow-ups that already stand alone; a rewriter should leave them as they are.
STANDALONE = (
    (
        "rent",
        ((U, "My landlord wrote about next year's lease."), (A, "Do you want help drafting a reply?")),
        "How much is my monthly rent?",
    ),
    (
        "sam-whisky",
        ((U, "I'm at the airport duty-free."), (A, "Anything you're looking for?")),
        "Which Japanese whisky does Sam like best?",
    ),
    (
        "bookclub-meeting",
        ((U, "I haven't finished the novel yet."), (A, "How far through are you?")),
        "When is the next book club meeting?",
    ),
    (
        "asset-tag",
        ((U, "I'm on hold with IT support."), (A, "Hope it's quick.")),
        "What is the asset tag of my work laptop?",
    ),
    (
        "vpn-gateway",
        ((U, "I'm setting up my home machine for remote work."), (A, "Sure, where are you stuck?")),
        "What is the hostname of our VPN gateway?",
    ),
    (
        "it-ticket",
        ((U, "The second monitor still doesn't work."), (A, "Annoying. Have you tried another cable?")),
        "What was the IT ticket number for my docking station problem?",
    ),
    (
        "tomatoes-planted",
        ((U, "The tomatoes look leggy."), (A, "They may be reaching for light.")),
        "When did I plant out the tomatoes?",
    ),
    (
        "raised-bed",
        ((U, "I'm buying compost this weekend."), (A, "How much do you think you need?")),
        "What are the dimensions of my raised bed?",
    ),
    (
        "own-dentist",
        ((U, "Work just put a workshop in my calendar for July."), (A, "Does it clash with anything?")),
        "When is my own dentist check-up?",
    ),
    (
        "outage-cause",
        ((U, "The post-mortem is tomorrow morning."), (A, "Do you want help preparing?")),
        "What was the root cause of last week's production database outage?",
    ),
)
